//! One CSV field as every CSV naslab writes has it (results.csv, naspt.csv, the
//! comparison's CSV): quoted as RFC 4180 asks, and never read as a formula.

/// The characters that make a spreadsheet (Excel, LibreOffice, Google Sheets) take a
/// cell for a formula when the cell starts with one of them.
const FORMULA_STARTS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// `text` as one CSV field: quoted when it holds a comma, a quote or a line break (quotes
/// doubled), and, when it starts as a formula would, led by an apostrophe, which
/// spreadsheets show as text and do not evaluate. A name from a trace is the user's
/// text, never a formula or extra columns.
pub fn csv_field(text: &str) -> String {
    let guarded = if text.starts_with(FORMULA_STARTS) && !is_number(text) {
        format!("'{text}")
    } else {
        text.to_string()
    };
    if guarded.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", guarded.replace('"', "\"\""))
    } else {
        guarded
    }
}

/// A plain signed number (`-3`, `+1.5`) stays as it is: it is data, not a formula.
fn is_number(text: &str) -> bool {
    text.len() > 1
        && text.starts_with(['-', '+'])
        && text[1..].parse::<f64>().is_ok_and(f64::is_finite)
        && text[1..].bytes().all(|b| b.is_ascii_digit() || b == b'.')
}

#[cfg(test)]
mod tests {
    use super::csv_field;

    #[test]
    fn fields_are_quoted_and_never_formulas() {
        assert_eq!(csv_field("FileCopyToNAS"), "FileCopyToNAS");
        assert_eq!(csv_field("Evil,1e9,0,0"), "\"Evil,1e9,0,0\"");
        assert_eq!(csv_field("two\nlines"), "\"two\nlines\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
        assert_eq!(csv_field("=1+1"), "'=1+1");
        assert_eq!(csv_field("+cmd"), "'+cmd");
        assert_eq!(csv_field("-2+3"), "'-2+3");
        assert_eq!(csv_field("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(csv_field("\tx"), "'\tx");
        assert_eq!(csv_field("-3.5"), "-3.5");
        assert_eq!(csv_field("a=b"), "a=b");
    }
}
