//! `naslab backends`: the backends this build has, how a run picks each, and what each
//! can do, from the engine's registry.

use naslab_targets::registry::{BACKENDS, Descriptor};
use serde_json::json;

use crate::args::BackendsArgs;

/// Prints the registry as a table, or as JSON with `--json`.
pub fn backends(args: BackendsArgs) -> anyhow::Result<()> {
    if args.json {
        let rows: Vec<_> = BACKENDS.iter().map(as_json).collect();
        return crate::stdout::print(&format!("{}\n", serde_json::to_string_pretty(&rows)?));
    }
    crate::stdout::print(&table())
}

fn as_json(d: &Descriptor) -> serde_json::Value {
    let mut v = json!({
        "name": d.name,
        "chosen_by": d.choice.to_string(),
        "summary": d.summary,
        "built": d.caps.is_some(),
    });
    match d.caps {
        Some(c) => {
            v["lacks"] = json!(d.lacks().iter().map(|k| k.name()).collect::<Vec<_>>());
            v["max_queue_depth"] = json!(c.max_queue_depth);
            v["direct_io"] = json!(c.direct_io);
            v["moves_data"] = json!(c.moves_data);
        }
        None => v["missing"] = json!(d.missing),
    }
    v
}

fn table() -> String {
    let mut out = String::new();
    let widths = (8, 24);
    out.push_str(&format!(
        "{:<w0$}  {:<w1$}  {}\n",
        "backend",
        "chosen by",
        "what it speaks to; what it cannot do",
        w0 = widths.0,
        w1 = widths.1
    ));
    for d in &BACKENDS {
        let can = match d.caps {
            None => format!("not in this build: {}", d.missing),
            Some(c) => {
                let lacks: Vec<_> = d.lacks().iter().map(|k| k.name()).collect();
                format!(
                    "queue depth up to {}; {}",
                    c.max_queue_depth,
                    if lacks.is_empty() {
                        "does every op".to_string()
                    } else {
                        format!("cannot do {}", lacks.join(", "))
                    }
                )
            }
        };
        out.push_str(&format!(
            "{:<w0$}  {:<w1$}  {}\n{:<w0$}  {:<w1$}  {}\n",
            d.name,
            d.choice.to_string(),
            d.summary,
            "",
            "",
            can,
            w0 = widths.0,
            w1 = widths.1
        ));
    }
    out
}
