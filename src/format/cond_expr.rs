//! The condition expressions of `--map` (`error_when=status>=500`): a small syntax for the
//! conditions formats files write as tables ([`Cond`]).
//!
//! `PATH` (set: present and not null, `false`, a zero or an empty string, array or object: an
//! `"error": ""` on every success is no failure), `PATH==VALUE`, `PATH!=VALUE` (present and not VALUE),
//! `PATH>=INTEGER` (a number, or a decimal string, at least it), `!COND` (the condition does
//! not hold). VALUE is JSON (`500`, `true`, `null`, `"HIT"`), or else a bare string (`HIT` is
//! `"HIT"`), compared with the line's JSON value (numbers by value: `200` is `200.0`); a null is
//! no value (`PATH==null` holds where it is null or absent, `PATH!=null` where present). No I/O.

use crate::format::{Cond, parse_path};

/// The syntax, for error messages.
pub(crate) const SYNTAX: &str =
    "expected PATH, PATH==VALUE, PATH!=VALUE, PATH>=INTEGER or !CONDITION";

/// Parses a condition expression.
///
/// # Errors
/// What is wrong: an empty path, a `>=` without an integer, an operator that is not one of
/// `==`, `!=`, `>=` (a lone `=`, `<`, `>`).
pub(crate) fn parse(s: &str) -> Result<Cond, String> {
    let s = s.trim();
    if let Some(inner) = s.strip_prefix('!') {
        return Ok(Cond::Not(Box::new(parse(inner)?)));
    }
    let op = ["==", "!=", ">="]
        .into_iter()
        .filter_map(|op| Some((s.find(op)?, op)))
        .min();
    let Some((at, op)) = op else {
        if s.is_empty() {
            return Err(format!("empty condition ({SYNTAX})"));
        }
        if let Some(c) = s.chars().find(|c| matches!(c, '=' | '<' | '>')) {
            return Err(format!("`{c}` is no operator here ({SYNTAX})"));
        }
        return Ok(Cond::Set(parse_path(s)));
    };
    let (path, value) = (s[..at].trim(), s[at + op.len()..].trim());
    if path.is_empty() {
        return Err(format!("no path before `{op}` ({SYNTAX})"));
    }
    let path = parse_path(path);
    match op {
        ">=" => value
            .parse::<i64>()
            .map(|n| Cond::AtLeast(path, n))
            .map_err(|_| format!("`>=` takes an integer, not {value:?}")),
        _ => {
            if value.is_empty() {
                return Err(format!("no value after `{op}` ({SYNTAX})"));
            }
            let json = match serde_json::from_str::<serde_json::Value>(value) {
                Ok(v) => v.to_string(),
                Err(_) => serde_json::Value::String(value.to_owned()).to_string(),
            };
            // A null is no value: `==null` holds where the path is null or absent.
            Ok(match (op == "==", json == "null") {
                (true, true) => Cond::Not(Box::new(Cond::Present(path))),
                (false, true) => Cond::Present(path),
                (true, false) => Cond::Equals(path, json),
                (false, false) => Cond::Differs(path, json),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Vec<String> {
        parse_path(s)
    }

    #[test]
    fn expressions_are_the_conditions_of_formats_files() {
        assert_eq!(
            parse("http.status>=500"),
            Ok(Cond::AtLeast(p("http.status"), 500))
        );
        assert_eq!(
            parse("cache==HIT"),
            Ok(Cond::Equals(p("cache"), "\"HIT\"".into()))
        );
        assert_eq!(
            parse("finish == \"abort\""),
            Ok(Cond::Equals(p("finish"), "\"abort\"".into()))
        );
        assert_eq!(parse("ok==true"), Ok(Cond::Equals(p("ok"), "true".into())));
        assert_eq!(parse("id!=0"), Ok(Cond::Differs(p("id"), "0".into())));
        assert_eq!(
            parse("error==null"),
            Ok(Cond::Not(Box::new(Cond::Present(p("error")))))
        );
        assert_eq!(parse("error!=null"), Ok(Cond::Present(p("error"))));
        assert_eq!(parse("error"), Ok(Cond::Set(p("error"))));
        assert_eq!(
            parse("!a.b==1"),
            Ok(Cond::Not(Box::new(Cond::Equals(p("a.b"), "1".into()))))
        );
        assert_eq!(
            parse("!stream"),
            Ok(Cond::Not(Box::new(Cond::Set(p("stream")))))
        );
    }

    #[test]
    fn mistakes_are_named() {
        assert!(parse("status>=5xx").unwrap_err().contains("integer"));
        assert!(
            parse("status>500")
                .unwrap_err()
                .contains("`>` is no operator")
        );
        assert!(
            parse("status=500")
                .unwrap_err()
                .contains("`=` is no operator")
        );
        assert!(parse("==1").unwrap_err().contains("no path"));
        assert!(parse("a==").unwrap_err().contains("no value"));
        assert!(parse("").unwrap_err().contains("empty"));
        assert!(parse("!").unwrap_err().contains("empty"));
    }
}
