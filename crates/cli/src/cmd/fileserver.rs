use std::collections::BTreeMap;

use std::sync::Arc;

use crate::multi::Coordinator;

use anyhow::bail;
use naslab_results::CacheMode;
use naslab_results::views::fileserver::fileserver_table;
use naslab_workload::synthetic::fileserver::FileServer;

use super::run::{View, compile_traces, context, execute_with};
use crate::args::{FileServerArgs, FileServerPhase};

/// `naslab fileserver`: many connections writing then reading their own files.
pub fn fileserver(args: FileServerArgs, coord: &Arc<dyn Coordinator>) -> anyhow::Result<()> {
    let record = args.record;
    if args.connections == 0 || args.files == 0 || record == 0 {
        bail!("--connections, --files and --record must be at least 1");
    }
    if args.opts.shared_files {
        // Each client's trace declares only its own connections' files.
        bail!(
            "fileserver spreads its connections over the clients, each with its own files; leave out --shared-files"
        );
    }
    // In a multi-client job the connections are spread over the clients, each client
    // taking the next run of them.
    let (first_connection, connections) = match coord.rank_and_size() {
        None => (0, args.connections),
        Some((rank, size)) => {
            let mine = connections_of(args.connections, rank, size);
            if mine == 0 {
                bail!(
                    "--connections {} is fewer than the job's {size} clients; give at least one connection per client",
                    args.connections
                );
            }
            let first = (0..rank)
                .map(|r| connections_of(args.connections, r, size))
                .sum();
            (first, mine)
        }
    };
    let spec = FileServer {
        connections,
        first_connection,
        files_per_connection: args.files,
        record,
    };
    let mut traces = Vec::new();
    if args.phase != FileServerPhase::Read {
        traces.push(spec.write_phase());
    }
    if args.phase != FileServerPhase::Write {
        traces.push(spec.read_phase());
    }
    let mut extra = BTreeMap::new();
    extra.insert(
        "fileserver".to_string(),
        format!(
            "{} connections x {} files, {} B records",
            args.connections, args.files, record
        ),
    );
    let ctx = context(&args.opts, coord, CacheMode::Drop, extra)?;
    let workloads = compile_traces(&ctx, traces)?;
    let view = View {
        file_name: "fileserver.txt",
        render: Box::new(|run, _| Ok(fileserver_table(run))),
    };
    execute_with(ctx, workloads, Some(view))
}

/// How many of `total` connections client `rank` of `size` opens: an equal share, the
/// first `total % size` clients one more.
fn connections_of(total: u32, rank: u32, size: u32) -> u32 {
    total / size + u32::from(rank < total % size)
}

#[cfg(test)]
mod tests {
    use super::connections_of;

    #[test]
    fn connections_are_spread_over_the_clients_exactly() {
        for (total, size) in [(600, 4), (590, 4), (7, 3), (3, 4), (1, 1)] {
            let shares: Vec<u32> = (0..size).map(|r| connections_of(total, r, size)).collect();
            assert_eq!(shares.iter().sum::<u32>(), total, "{total} over {size}");
            let (lo, hi) = (shares.iter().min().unwrap(), shares.iter().max().unwrap());
            assert!(hi - lo <= 1, "{shares:?}");
        }
        assert_eq!(connections_of(590, 0, 4), 148);
        assert_eq!(connections_of(590, 3, 4), 147);
    }
}
