// The load probe of tests/servers/openttd.sh: logs the game's tick counter
// every tick (openttd -d script=4 prints it), so the scenario reads the
// server's own ticks.
class TickLog extends GSController {
  function Start() {
    while (true) {
      GSLog.Info("tick " + GSController.GetTick());
      this.Sleep(1);
    }
  }
}
