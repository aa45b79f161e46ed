//! What a run's ops waited through when the path to the server broke (a link cut,
//! connections reset, the server restarted) and the client got over it: the ops that
//! stalled, the longest stall, the ops that failed, the failover gap and the
//! connections made again.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::duration_text;

/// An iteration's failover, present when a connection broke under it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct FailoverSummary {
    /// Ops whose latency includes getting over a broken connection (a new connection,
    /// requests sent again): each one's latency is the stall it saw.
    pub stalled_ops: u64,
    /// Their latencies together, ns.
    pub stall_total_ns: u64,
    /// The longest of them, ns, and its op kind.
    pub longest_stall_ns: u64,
    pub longest_stall_op: String,
    /// Ops that failed from the first stall on (a stalled op that could not be carried,
    /// an op on a handle lost with its session), and the first of them named.
    pub failed_ops: u64,
    pub failed: Vec<FailedOp>,
    /// When the first stalled op was issued, ns into the measured phase.
    pub first_stall_ns: u64,
    /// The failover gap, ns: from the issue of the first op that stalled to the
    /// completion of the first op that succeeded after a stall, in any stream that
    /// stalled. Absent when none did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap_ns: Option<u64>,
    /// New connections made after one broke, and requests sent again on them.
    pub reconnects: u64,
    pub retries: u64,
    /// NFS: files whose unstable writes the server may have lost (its write verifier
    /// changed before their COMMIT: it restarted in between, and naslab keeps no copy of
    /// the data to send again).
    #[serde(default, skip_serializing_if = "crate::model::is_zero")]
    pub unconfirmed_writes: u64,
}

/// An op that failed from the first stall on.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct FailedOp {
    /// Its kind (`write`, `open`...), its file (relative to the workload directory) and
    /// why it failed.
    pub op: String,
    pub path: String,
    pub error: String,
}

impl FailoverSummary {
    /// Adds another client's failover: counts add, the longest stall is the longer, the
    /// gap runs from the earlier first stall to the earlier recovery (the clients share
    /// the phase's clock).
    pub fn add(&mut self, other: &FailoverSummary) {
        let back = |f: &FailoverSummary| f.gap_ns.map(|g| f.first_stall_ns + g);
        let ends = [back(self), back(other)].into_iter().flatten().min();
        let first = if self.stalled_ops == 0 {
            other.first_stall_ns
        } else if other.stalled_ops == 0 {
            self.first_stall_ns
        } else {
            self.first_stall_ns.min(other.first_stall_ns)
        };
        self.stalled_ops += other.stalled_ops;
        self.stall_total_ns += other.stall_total_ns;
        if other.longest_stall_ns > self.longest_stall_ns {
            self.longest_stall_ns = other.longest_stall_ns;
            self.longest_stall_op = other.longest_stall_op.clone();
        }
        self.failed_ops += other.failed_ops;
        self.failed.extend(other.failed.iter().cloned());
        self.first_stall_ns = first;
        self.gap_ns = ends.map(|e| e.saturating_sub(first));
        self.reconnects += other.reconnects;
        self.retries += other.retries;
        self.unconfirmed_writes += other.unconfirmed_writes;
    }

    /// The summary in one line, for the terminal.
    pub fn line(&self) -> String {
        let mut line = format!(
            "{} ops stalled ({} in all, longest {} in a {}), {} reconnects, {} requests sent again; gap {}",
            self.stalled_ops,
            duration_text(self.stall_total_ns),
            duration_text(self.longest_stall_ns),
            if self.longest_stall_op.is_empty() {
                "-"
            } else {
                &self.longest_stall_op
            },
            self.reconnects,
            self.retries,
            self.gap_ns
                .map(duration_text)
                .unwrap_or_else(|| "open (no op succeeded after the first stall)".into())
        );
        if self.failed_ops > 0 {
            // Alike failures once each, with their count, in the order first seen.
            let mut alike: Vec<(&FailedOp, u64)> = Vec::new();
            for f in &self.failed {
                match alike.iter_mut().find(|(g, _)| *g == f) {
                    Some((_, n)) => *n += 1,
                    None => alike.push((f, 1)),
                }
            }
            let named: Vec<String> = alike
                .iter()
                .take(5)
                .map(|(f, n)| format!("{n} × {} {} ({})", f.op, f.path, f.error))
                .collect();
            let shown: u64 = alike.iter().take(5).map(|(_, n)| n).sum();
            line.push_str(&format!(
                "; {} failed: {}{}",
                self.failed_ops,
                named.join(", "),
                if self.failed_ops > shown {
                    format!(
                        ", {} more (run.json names up to 100 a stream)",
                        self.failed_ops - shown
                    )
                } else {
                    String::new()
                }
            ));
        } else {
            line.push_str("; none failed");
        }
        if self.unconfirmed_writes > 0 {
            line.push_str(&format!(
                "; {} files' unstable writes unconfirmed (the server restarted before their COMMIT)",
                self.unconfirmed_writes
            ));
        }
        line
    }
}

/// SMB durable handles in an iteration: file opens that asked for one, the handles
/// granted, and, at a reconnect, the open handles claimed back on the new session and
/// those lost (none granted, or the claim refused). Absent when no open asked for one
/// and no handle was lost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct DurableHandles {
    pub asked: u64,
    pub granted: u64,
    pub reclaimed: u64,
    pub lost: u64,
}

impl DurableHandles {
    /// Adds another client's counts.
    pub fn add(&mut self, other: &DurableHandles) {
        self.asked += other.asked;
        self.granted += other.granted;
        self.reclaimed += other.reclaimed;
        self.lost += other.lost;
    }

    /// The counts in one line, for the terminal.
    pub fn line(&self) -> String {
        format!(
            "{} asked, {} granted; at a reconnect {} reclaimed, {} lost",
            self.asked, self.granted, self.reclaimed, self.lost
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_add_up_and_the_gap_spans_the_earliest_stall_to_the_earliest_return() {
        let mut a = FailoverSummary {
            stalled_ops: 1,
            stall_total_ns: 3_000,
            longest_stall_ns: 3_000,
            longest_stall_op: "write".into(),
            first_stall_ns: 10_000,
            gap_ns: Some(3_000),
            reconnects: 1,
            retries: 1,
            ..FailoverSummary::default()
        };
        let b = FailoverSummary {
            stalled_ops: 2,
            stall_total_ns: 9_000,
            longest_stall_ns: 5_000,
            longest_stall_op: "close".into(),
            failed_ops: 1,
            failed: vec![FailedOp {
                op: "close".into(),
                path: "f1".into(),
                error: "ENOTCONN".into(),
            }],
            first_stall_ns: 9_000,
            gap_ns: Some(5_000),
            reconnects: 2,
            retries: 3,
            ..FailoverSummary::default()
        };
        a.add(&b);
        assert_eq!((a.stalled_ops, a.stall_total_ns), (3, 12_000));
        assert_eq!(
            (a.longest_stall_ns, a.longest_stall_op.as_str()),
            (5_000, "close")
        );
        // From 9 µs (b's first stall) to 13 µs (a back at 10 + 3).
        assert_eq!((a.first_stall_ns, a.gap_ns), (9_000, Some(4_000)));
        assert_eq!((a.reconnects, a.retries, a.failed_ops), (3, 4, 1));
        let line = a.line();
        assert!(
            line.contains("3 ops stalled") && line.contains("1 failed: 1 × close f1 (ENOTCONN)"),
            "{line}"
        );
        let mut none = FailoverSummary::default();
        none.add(&b);
        assert_eq!((none.first_stall_ns, none.gap_ns), (9_000, Some(5_000)));
    }
}
