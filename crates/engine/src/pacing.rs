//! The three pacing modes and the schedule each gives an op.

use std::fmt;
use std::str::FromStr;

/// How a stream spaces its ops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pacing {
    /// Each op as soon as the previous one completed (idle time removed).
    #[default]
    Afap,
    /// At the trace's own timestamps; a late op is issued at once and its lag recorded.
    Original,
    /// A fixed gap between one op's completion and the next op's issue.
    Delay { gap_ns: u64 },
}

impl Pacing {
    /// When the next op is due, ns since the start; `None` means now.
    #[inline]
    pub fn due(self, t_us: u64, t0_us: u64, prev_done_ns: Option<u64>) -> Option<u64> {
        match self {
            Pacing::Afap => None,
            Pacing::Original => Some((t_us - t0_us).saturating_mul(1000)),
            Pacing::Delay { gap_ns } => prev_done_ns.map(|d| d + gap_ns),
        }
    }
}

impl fmt::Display for Pacing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pacing::Afap => f.write_str("afap"),
            Pacing::Original => f.write_str("original"),
            Pacing::Delay { gap_ns } => write!(f, "delay:{gap_ns}ns"),
        }
    }
}

impl FromStr for Pacing {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "afap" => Ok(Pacing::Afap),
            "original" => Ok(Pacing::Original),
            _ => match s.strip_prefix("delay:") {
                Some(d) => parse_duration_ns(d)
                    .map(|gap_ns| Pacing::Delay { gap_ns })
                    .map_err(|e| format!("{s}: {e}")),
                None => Err(format!(
                    "unknown pacing '{s}'; use afap, original or delay:DURATION (e.g. delay:10ms)"
                )),
            },
        }
    }
}

/// The longest duration naslab takes: a week, for soak tests under `--time-limit`.
pub const MAX_DURATION_NS: u64 = 7 * 24 * 3_600_000_000_000;

/// Parses `250ns`, `100us`, `10ms`, `1.5s`, `2m`, `12h`: naslab's one duration grammar.
pub fn parse_duration_ns(text: &str) -> Result<u64, String> {
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (num, unit) = text.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("'{text}' is not a duration; write e.g. 500us, 10ms or 1s"))?;
    let scale = match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "m" | "min" => 60e9,
        "h" => 3600e9,
        "" => return Err(format!("'{text}' has no unit; write e.g. {text}ms")),
        _ => {
            return Err(format!(
                "unknown unit '{unit}' in '{text}'; use ns, us, ms, s, m (minutes) or h"
            ));
        }
    };
    let ns = value * scale;
    if !ns.is_finite() || !(0.0..=MAX_DURATION_NS as f64).contains(&ns) {
        return Err(format!("'{text}' is out of range (0 to 7 days)"));
    }
    Ok(ns.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_three_modes() {
        assert_eq!("afap".parse::<Pacing>(), Ok(Pacing::Afap));
        assert_eq!("original".parse::<Pacing>(), Ok(Pacing::Original));
        assert_eq!(
            "delay:1.5ms".parse::<Pacing>(),
            Ok(Pacing::Delay { gap_ns: 1_500_000 })
        );
        assert_eq!(
            "delay:100us".parse::<Pacing>(),
            Ok(Pacing::Delay { gap_ns: 100_000 })
        );
        assert!(
            "delay:10"
                .parse::<Pacing>()
                .unwrap_err()
                .contains("no unit")
        );
        assert!(
            "fast"
                .parse::<Pacing>()
                .unwrap_err()
                .contains("afap, original")
        );
        assert!("delay:-1s".parse::<Pacing>().is_err());
    }

    #[test]
    fn durations_take_every_unit_up_to_a_week() {
        assert_eq!(parse_duration_ns("250ns"), Ok(250));
        assert_eq!(parse_duration_ns("30s"), Ok(30_000_000_000));
        assert_eq!(parse_duration_ns("2m"), Ok(120_000_000_000));
        assert_eq!(parse_duration_ns("1.5min"), Ok(90_000_000_000));
        assert_eq!(parse_duration_ns("12h"), Ok(43_200_000_000_000));
        assert_eq!(parse_duration_ns("168h"), Ok(MAX_DURATION_NS));
        assert!(
            parse_duration_ns("169h")
                .unwrap_err()
                .contains("out of range (0 to 7 days)")
        );
        assert!(
            parse_duration_ns("3d")
                .unwrap_err()
                .contains("ns, us, ms, s, m (minutes) or h")
        );
    }
}
