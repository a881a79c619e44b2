//! The registration protocol, one line each way over scx_tick's Unix
//! socket: the runner sends `REGISTER <tid>`; scx_tick answers
//! `OK <slot> <slots>`, with its tick group's hint array as a file
//! descriptor, or `ERR <why>`. Both sides write and read the lines here.

/// The longest request line scx_tick reads, without its newline.
pub const REQUEST_MAX: usize = 64;

/// The request of thread `tid`.
pub fn request(tid: u32) -> String {
    format!("REGISTER {tid}\n")
}

/// What the bytes a client sent so far hold.
#[derive(Debug, PartialEq, Eq)]
pub enum Framing<'a> {
    /// No newline yet, and not too long yet.
    Incomplete,
    /// More than [`REQUEST_MAX`] bytes before the newline (or without one).
    TooLong,
    /// The request line, without its newline.
    Line(&'a [u8]),
}

/// The first line of `buf`, once it is complete.
pub fn frame_request(buf: &[u8]) -> Framing<'_> {
    let end = buf.iter().position(|&b| b == b'\n');
    match end {
        _ if end.unwrap_or(buf.len()) > REQUEST_MAX => Framing::TooLong,
        Some(end) => Framing::Line(&buf[..end]),
        None => Framing::Incomplete,
    }
}

/// The thread a request line asks a slot for: `REGISTER` and a decimal
/// thread id, nothing else (surrounding white space aside).
pub fn parse_request(line: &[u8]) -> Result<u32, String> {
    let text = std::str::from_utf8(line).map_err(|_| "a request that is not UTF-8".to_string())?;
    text.trim()
        .strip_prefix("REGISTER ")
        .and_then(decimal)
        .ok_or_else(|| format!("bad request {text:?}: expected \"REGISTER <tid>\""))
}

/// A number in decimal digits and nothing else (no sign, no space), as
/// both sides write them.
fn decimal<T: std::str::FromStr>(w: &str) -> Option<T> {
    if w.is_empty() || !w.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    w.parse().ok()
}

/// scx_tick's answer to a request.
#[derive(Debug, PartialEq, Eq)]
pub enum Reply {
    /// Slot `slot` of the group's array of `slots` (`slot < slots`).
    Slot { slot: usize, slots: usize },
    /// Why scx_tick refused, in words.
    Refused(String),
}

/// The answer that gives a slot.
pub fn reply_slot(slot: usize, slots: usize) -> String {
    format!("OK {slot} {slots}\n")
}

/// The answer that refuses: one line, whatever `why` holds.
pub fn reply_refused(why: &str) -> String {
    format!("ERR {}\n", one_line(why))
}

fn one_line(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

/// Read scx_tick's answer (its first line).
pub fn parse_reply(text: &str) -> Result<Reply, String> {
    let line = text.lines().next().unwrap_or("");
    if let Some(why) = line.strip_prefix("ERR ") {
        return Ok(Reply::Refused(why.trim().to_string()));
    }
    let bad = || format!("unexpected reply from scx_tick: {line:?}");
    let words: Vec<&str> = line
        .strip_prefix("OK ")
        .ok_or_else(bad)?
        .split(' ')
        .collect();
    let [slot, slots] = words[..] else {
        return Err(bad());
    };
    let (Some(slot), Some(slots)) = (decimal::<usize>(slot), decimal::<usize>(slots)) else {
        return Err(bad());
    };
    if slot >= slots {
        return Err(format!("slot {slot} out of range (the array has {slots})"));
    }
    Ok(Reply::Slot { slot, slots })
}

/// What fuzzing checks of the protocol (the targets in `fuzz/`, and
/// scx_tick's `cargo test`, which replays their committed corpus): no
/// input panics, an error is one line, and what is read back is what was
/// written. Not part of the client API.
#[doc(hidden)]
pub mod checks {
    use super::*;

    fn check_message(input: &[u8], e: &str) {
        assert!(!e.trim().is_empty(), "empty error for {input:?}");
        assert!(!e.contains('\n'), "multi-line error for {input:?}: {e}");
    }

    /// Bytes as a client may send them, framed and parsed as scx_tick does.
    pub fn request_bytes(data: &[u8]) {
        match frame_request(data) {
            Framing::Incomplete => assert!(!data.contains(&b'\n') && data.len() <= REQUEST_MAX),
            Framing::TooLong => {}
            Framing::Line(line) => {
                assert!(line.len() <= REQUEST_MAX && !line.contains(&b'\n'));
                match parse_request(line) {
                    Ok(tid) => {
                        let sent = request(tid);
                        assert_eq!(parse_request(sent.trim_end().as_bytes()), Ok(tid));
                        let text = std::str::from_utf8(line).unwrap();
                        assert!(text.trim().starts_with("REGISTER "), "{text:?}");
                    }
                    Err(e) => check_message(line, &e),
                }
            }
        }
    }

    /// Bytes as scx_tick may answer, read as the client does; and any text
    /// as a refusal's reason, written and read back.
    pub fn reply_bytes(data: &[u8]) {
        let text = String::from_utf8_lossy(data);
        match parse_reply(&text) {
            Ok(Reply::Slot { slot, slots }) => {
                assert!(slot < slots, "{text:?}");
                assert_eq!(
                    parse_reply(&reply_slot(slot, slots)),
                    Ok(Reply::Slot { slot, slots })
                );
            }
            Ok(Reply::Refused(why)) => assert!(!why.contains('\n'), "{text:?}"),
            Err(e) => check_message(data, &e),
        }
        let why = one_line(&text).trim().to_string();
        assert_eq!(
            parse_reply(&reply_refused(&text)),
            Ok(Reply::Refused(why)),
            "{text:?}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_read_back_as_written() {
        assert_eq!(parse_request(request(42).trim_end().as_bytes()), Ok(42));
        assert_eq!(
            frame_request(b"REGISTER 7\nmore"),
            Framing::Line(b"REGISTER 7")
        );
        assert_eq!(frame_request(b"REGISTER 7"), Framing::Incomplete);
        assert_eq!(frame_request(&[b'x'; REQUEST_MAX + 1]), Framing::TooLong);
        for bad in [
            "REGISTER +42",
            "REGISTER 4 2",
            "REGISTER",
            "REGISTER 99999999999",
            "register 1",
        ] {
            assert!(parse_request(bad.as_bytes()).is_err(), "{bad}");
        }
        assert_eq!(
            parse_reply("OK 3 256\n"),
            Ok(Reply::Slot {
                slot: 3,
                slots: 256
            })
        );
        assert!(parse_reply("OK 256 256\n").is_err());
        assert!(parse_reply("OK 1 2 3\n").is_err());
        assert_eq!(
            parse_reply(&reply_refused("not in\na tick group")),
            Ok(Reply::Refused("not in a tick group".into()))
        );
    }
}
