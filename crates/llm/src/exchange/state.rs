//! Whether a recording holds a whole run: `recording.json` beside the exchanges says
//! `recording` from the moment the recording starts, and is rewritten once the recorded
//! run ends (`complete`, `cancelled` or `failed`). A recording cut short — by Ctrl-C,
//! an error, or a process killed before it could say so — therefore never reads as
//! whole, and its replay is refused with that reason instead of a diff that blames the
//! review for requests the recording never got to hold.
//!
//! A folder without the file (recorded before vouch wrote it) claims nothing and is
//! replayed as before.

use std::fs;
use std::path::Path;

use serde_json::{Value, json};

use super::{ExchangeError, io_error, write_atomically};

/// The file of a recording folder that says how the recorded run ended.
pub const RECORDING_STATE_FILE: &str = "recording.json";
/// Schema tag of that file.
const STATE_VERSION: &str = "vouch.exchange-recording/1";
/// The state while the run is being recorded (and forever, if it never ends normally).
const RECORDING: &str = "recording";

/// How a recorded run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordingEnd {
    /// The run ended normally (its report was made, whatever its outcome): the
    /// recording holds every exchange it had.
    Complete,
    /// The run was cancelled (Ctrl-C or SIGTERM) before it ended.
    Cancelled,
    /// The run ended with an error before its report was made.
    Failed,
}

impl RecordingEnd {
    fn as_str(self) -> &'static str {
        match self {
            RecordingEnd::Complete => "complete",
            RecordingEnd::Cancelled => "cancelled",
            RecordingEnd::Failed => "failed",
        }
    }
}

/// Writes `state` to the state file of the recording in `dir`.
fn write_state(dir: &Path, state: &str) -> Result<(), ExchangeError> {
    let text = serde_json::to_string_pretty(&json!({
        "version": STATE_VERSION,
        "state": state,
    }))
    .unwrap_or_default()
        + "\n";
    write_atomically(&dir.join(RECORDING_STATE_FILE), text.as_bytes())
}

/// Marks the recording in `dir` as begun (not yet whole).
pub(super) fn begin(dir: &Path) -> Result<(), ExchangeError> {
    write_state(dir, RECORDING)
}

/// Marks the recording in `dir` with how its run ended.
pub(super) fn end(dir: &Path, end: RecordingEnd) -> Result<(), ExchangeError> {
    write_state(dir, end.as_str())
}

/// Rule (replay of a recording cut short): a recording whose state file says anything
/// but `complete` is refused, naming why it is incomplete and that it must be recorded
/// again; `exchanges` is how many exchanges it holds. A folder without the file passes.
pub(super) fn check_whole(dir: &Path, exchanges: usize) -> Result<(), ExchangeError> {
    let path = dir.join(RECORDING_STATE_FILE);
    let text = match fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_error(&path, e)),
    };
    let state = serde_json::from_str::<Value>(&text)
        .ok()
        .filter(|v| v.get("version").and_then(Value::as_str) == Some(STATE_VERSION))
        .and_then(|v| v.get("state").and_then(Value::as_str).map(str::to_owned));
    let why = match state.as_deref() {
        Some("complete") => return Ok(()),
        Some("cancelled") => {
            "the recorded review was cancelled (Ctrl-C or SIGTERM) before it ended"
        }
        Some("failed") => "the recorded review failed before it ended",
        Some(RECORDING) => {
            "the recorded review never finished (the process was killed, or is still running)"
        }
        _ => {
            return Err(ExchangeError::Recording {
                path,
                message: format!(
                    "not a recording state file (expected version {STATE_VERSION} with a \
                     state); record the review again with --record"
                ),
            });
        }
    };
    Err(ExchangeError::Recording {
        path: dir.to_path_buf(),
        message: format!(
            "the recording is incomplete: {why}, so it holds only the {exchanges} \
             exchange(s) made until then; record the review again with --record into a new \
             or empty folder"
        ),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::{Answer, Recorder, Replayer};
    use super::*;

    fn recorded(dir: &Path) -> Recorder {
        let recorder = Recorder::create(dir).unwrap();
        recorder.store(
            &json!({"model": "m", "messages": []}),
            &Answer::Body(json!({"choices": []})),
        );
        recorder
    }

    fn refusal(dir: &Path) -> String {
        Replayer::load(dir).unwrap_err().to_string()
    }

    #[test]
    fn only_a_recording_whose_run_ended_normally_replays() {
        for (end, why) in [
            (
                None,
                "the recorded review never finished (the process was killed, or is still running)",
            ),
            (
                Some(RecordingEnd::Cancelled),
                "the recorded review was cancelled (Ctrl-C or SIGTERM) before it ended",
            ),
            (
                Some(RecordingEnd::Failed),
                "the recorded review failed before it ended",
            ),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let recorder = recorded(dir.path());
            if let Some(end) = end {
                recorder.finish(end).unwrap();
            }
            let error = refusal(dir.path());
            assert!(
                error.contains(&format!(
                    "the recording is incomplete: {why}, so it holds only the 1 exchange(s)"
                )) && error
                    .ends_with("record the review again with --record into a new or empty folder"),
                "{end:?}: {error}"
            );
        }
        let dir = tempfile::tempdir().unwrap();
        recorded(dir.path()).finish(RecordingEnd::Complete).unwrap();
        let replay = Replayer::load(dir.path()).unwrap();
        assert_eq!(replay.unused(), 1, "the state file is no exchange");
    }

    #[test]
    fn a_recording_without_a_state_file_claims_nothing_and_a_foreign_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        recorded(dir.path());
        fs::remove_file(dir.path().join(RECORDING_STATE_FILE)).unwrap();
        assert_eq!(Replayer::load(dir.path()).unwrap().unused(), 1);
        fs::write(
            dir.path().join(RECORDING_STATE_FILE),
            "{\"state\": \"complete\"}",
        )
        .unwrap();
        assert!(
            refusal(dir.path()).contains("not a recording state file"),
            "{}",
            refusal(dir.path())
        );
    }
}
