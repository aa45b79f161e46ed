//! A progress bar on stderr while a workload runs, only when stderr is a terminal.

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use naslab_engine::Progress;

/// Draws `progress` until dropped.
pub struct Display {
    done: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Display {
    /// Starts drawing for a workload of `total_ops` ops after `prepare_bytes` of preparation.
    pub fn start(
        name: &str,
        progress: Arc<Progress>,
        prepare_bytes: u64,
        total_ops: u64,
    ) -> Display {
        let done = Arc::new(AtomicBool::new(false));
        if !std::io::stderr().is_terminal() {
            return Display { done, thread: None };
        }
        let bar = ProgressBar::new(total_ops.max(1));
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix:>24} {msg:<12} [{bar:30}] {pos}/{len} ops {elapsed}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar.set_prefix(naslab_trace::printable(name).into_owned());
        let flag = done.clone();
        let thread = std::thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                let ops = progress.ops.load(Ordering::Relaxed);
                let prepared = progress.prepared_bytes.load(Ordering::Relaxed);
                if ops == 0 && prepared < prepare_bytes {
                    bar.set_message(format!(
                        "prepare {:.0}%",
                        prepared as f64 * 100.0 / prepare_bytes.max(1) as f64
                    ));
                } else {
                    bar.set_message("measure");
                    bar.set_position(ops);
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            bar.finish_and_clear();
        });
        Display {
            done,
            thread: Some(thread),
        }
    }
}

impl Drop for Display {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
