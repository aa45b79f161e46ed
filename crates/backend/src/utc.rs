//! The current UTC time as calendar fields, for the names and notes naslab writes
//! (who holds a target, and since when).

/// The current UTC time as year, month, day, hour, minute and second.
#[cfg(unix)]
pub fn utc_fields() -> [i32; 6] {
    // SAFETY: time accepts a null pointer; gmtime_r writes only the tm we pass.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: as above: a null pointer for time, and tm is ours for gmtime_r to fill.
    unsafe {
        let t = libc::time(std::ptr::null_mut());
        libc::gmtime_r(&t, &mut tm);
    }
    [
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
    ]
}

/// The current UTC time as year, month, day, hour, minute and second.
#[cfg(not(unix))]
pub fn utc_fields() -> [i32; 6] {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    fields_of(secs)
}

/// The calendar fields of `secs` after 1970-01-01T00:00:00Z (the proleptic Gregorian
/// calendar, as gmtime counts).
#[cfg_attr(unix, allow(dead_code))]
fn fields_of(secs: i64) -> [i32; 6] {
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Days to a civil date, counting eras of 400 years from 0000-03-01.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    [
        year as i32,
        month as i32,
        day as i32,
        (rem / 3_600) as i32,
        (rem % 3_600 / 60) as i32,
        (rem % 60) as i32,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar_fields_of_known_instants() {
        assert_eq!(fields_of(0), [1970, 1, 1, 0, 0, 0]);
        // 2000-02-29T12:34:56Z, a leap day in a year divisible by 400.
        assert_eq!(fields_of(951_827_696), [2000, 2, 29, 12, 34, 56]);
        // 2026-11-27T06:00:24Z.
        assert_eq!(fields_of(1_795_759_224), [2026, 11, 27, 6, 0, 24]);
    }

    #[test]
    fn now_is_a_plausible_date() {
        let [y, mo, d, h, mi, s] = utc_fields();
        assert!((2024..3000).contains(&y), "{y}");
        assert!((1..=12).contains(&mo) && (1..=31).contains(&d));
        assert!(h < 24 && mi < 60 && s < 61);
    }
}
