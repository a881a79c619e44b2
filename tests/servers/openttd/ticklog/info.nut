class TickLog extends GSInfo {
  function GetAuthor()      { return "scx_tick"; }
  function GetName()        { return "TickLog"; }
  function GetShortName()   { return "TKLG"; }
  function GetDescription() { return "Logs the game tick counter every tick"; }
  function GetVersion()     { return 1; }
  function GetDate()        { return "2026-11-26"; }
  function CreateInstance() { return "TickLog"; }
  function GetAPIVersion()  { return "13"; }
}
RegisterGS(TickLog());
