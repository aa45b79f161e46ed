use super::Exporter;
use crate::RunResult;

/// run.json: the whole model, pretty-printed.
pub struct Json;

impl Exporter for Json {
    fn file_name(&self) -> &'static str {
        "run.json"
    }

    fn export(&self, run: &RunResult) -> Vec<u8> {
        // The model holds only strings, numbers, maps and vectors: serialising cannot fail.
        let mut out = serde_json::to_vec_pretty(run).unwrap_or_default();
        out.push(b'\n');
        out
    }
}
