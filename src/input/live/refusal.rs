//! A read the API server refuses (403) is an answer, not a failure: the checks that needed it
//! say "not checked" with the role that grants it, and the run goes on. Every optional read
//! takes its refusals here, so each one traces and words them alike; any other failure stays
//! the read's error.

use super::{ReadError, Trace};
use crate::model::collected::Collected;

/// The answer `error` is when the API server refused the read (403): after a trace line of
/// what it costs (`not_checked`), the reason the checks give, built by `needs` from the refused
/// action. `None` for any other error, which stays the read's failure.
pub(crate) fn refusal(
    error: &ReadError,
    trace: Trace<'_>,
    not_checked: &str,
    needs: impl FnOnce(&str) -> String,
) -> Option<String> {
    if error.http_status != Some(403) {
        return None;
    }
    let action = error.action.as_deref().unwrap_or_default();
    trace(&format!("{action}: forbidden; {not_checked}"));
    Some(needs(action))
}

/// One optional read's outcome as the state keeps it: read, or refused with its reason.
pub(crate) fn read_or_refused<T>(
    read: Result<T, ReadError>,
    trace: Trace<'_>,
    not_checked: &str,
    needs: impl FnOnce(&str) -> String,
) -> Result<Collected<T>, ReadError> {
    match read {
        Ok(value) => Ok(Collected::Read(value)),
        Err(error) => match refusal(&error, trace, not_checked, needs) {
            Some(why) => Ok(Collected::Refused(why)),
            None => Err(error),
        },
    }
}

/// The first refusal among the errors of reads that answer together.
pub(crate) fn first_refusal<'e>(
    errors: impl IntoIterator<Item = Option<&'e ReadError>>,
) -> Option<&'e ReadError> {
    errors
        .into_iter()
        .flatten()
        .find(|e| e.http_status == Some(403))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(action: &str) -> ReadError {
        let mut error = ReadError::new(format!("cannot {action}: forbidden (403)"));
        error.http_status = Some(403);
        error.action = Some(action.to_string());
        error
    }

    #[test]
    fn a_refusal_is_the_reason_and_anything_else_stays_an_error() {
        let traced = std::sync::Mutex::new(Vec::new());
        let trace = |line: &str| traced.lock().unwrap().push(line.to_string());
        let read: Result<Collected<Vec<u8>>, _> = read_or_refused(
            Err(refused("list events in default")),
            &trace,
            "the Event checks are not checked",
            |action| format!("needs {action}"),
        );
        assert_eq!(
            read.unwrap(),
            Collected::Refused("needs list events in default".into())
        );
        assert_eq!(
            traced.lock().unwrap().as_slice(),
            ["list events in default: forbidden; the Event checks are not checked"]
        );
        let mut failed = ReadError::new("cannot list events: 500");
        failed.http_status = Some(500);
        let read: Result<Collected<()>, _> =
            read_or_refused(Err(failed.clone()), &trace, "x", |a| a.to_string());
        assert_eq!(read.unwrap_err(), failed);
        assert_eq!(
            first_refusal([Some(&failed), None, Some(&refused("get x"))]).map(|e| e.http_status),
            Some(Some(403))
        );
    }
}
