//! Streaming outputs. A run hands its tables to a [`Sink`] in batches of
//! rows as it produces them (time series as time passes, records when the
//! run ends), so it holds at most one batch per table, never a whole
//! series: a run's memory is its simulation state plus a constant.

use crate::outputs::report::{Report, Table};

/// Rows a table gathers before they go to the sink: large enough that a
/// batch costs little to hand over, small enough (about 2 MiB for queue
/// samples) to be a constant beside the simulation's state. Every batch but
/// a table's last has exactly this many rows, a multiple of the 1024 values
/// a Parquet column writer takes at a time, so files written batch by batch
/// equal files written in one piece (see `python/ecnlab/runner/writer.py`).
pub const BATCH_ROWS: usize = 1 << 16;

/// Where a run's outputs go. `Send`: the partitioned engine runs its parts'
/// worlds, each with a sink of its own, on worker threads.
pub trait Sink: Send {
    /// More rows of table `batch.name`, columns in the table's order. Every
    /// table is sent at least once, perhaps empty, so its columns are known;
    /// batches of one table arrive in order. An error stops the run.
    fn rows(&mut self, batch: Table) -> Result<(), String>;
    /// The next bytes of the pcap file of switch port `port` ("node:peer");
    /// the first call starts with the file header.
    fn capture(&mut self, port: &str, bytes: &[u8]) -> Result<(), String>;
}

/// A sink that keeps everything: whole tables in memory, as a [`Report`].
#[derive(Default)]
pub struct Collect {
    pub tables: Vec<Table>,
    pub captures: Vec<(String, Vec<u8>)>,
}

impl Sink for Collect {
    fn rows(&mut self, batch: Table) -> Result<(), String> {
        match self.tables.iter_mut().find(|t| t.name == batch.name) {
            Some(t) => t.append(batch),
            None => self.tables.push(batch),
        }
        Ok(())
    }

    fn capture(&mut self, port: &str, bytes: &[u8]) -> Result<(), String> {
        match self.captures.iter_mut().find(|c| c.0 == port) {
            Some(c) => c.1.extend_from_slice(bytes),
            None => self.captures.push((port.to_string(), bytes.to_vec())),
        }
        Ok(())
    }
}

impl Collect {
    pub fn into_report(self, summary: serde_json::Map<String, serde_json::Value>) -> Report {
        Report { summary, tables: self.tables, captures: self.captures }
    }
}

/// The run's side of its sink: after the first failure nothing more is
/// sent, and the run loop stops when it next looks (see `World::run`).
pub struct Output<'s> {
    sink: &'s mut dyn Sink,
    pub failed: Option<String>,
}

impl<'s> Output<'s> {
    pub fn new(sink: &'s mut dyn Sink) -> Self {
        Output { sink, failed: None }
    }

    pub fn send(&mut self, batch: Table) {
        if self.failed.is_none() {
            if let Err(e) = self.sink.rows(batch) {
                self.failed = Some(e);
            }
        }
    }

    pub fn capture(&mut self, port: &str, bytes: &[u8]) {
        if self.failed.is_none() {
            if let Err(e) = self.sink.capture(port, bytes) {
                self.failed = Some(e);
            }
        }
    }
}

/// Declares the row buffer of one output table: a `Vec` per column, a
/// `push` of one row, and the hand-over to an [`Output`] in batches.
/// Column names are the field names.
macro_rules! table_rows {
    ($(#[$doc:meta])* $ty:ident = $name:literal { $($col:ident : $kind:ident($t:ty)),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Default)]
        pub struct $ty {
            $(pub $col: Vec<$t>,)+
            /// A batch (perhaps empty) went to the sink.
            sent: bool,
        }

        impl $ty {
            #[allow(clippy::too_many_arguments)]
            #[inline]
            pub fn push(&mut self, $($col: $t),+) {
                $(self.$col.push($col);)+
            }

            pub fn len(&self) -> usize {
                [$(self.$col.len()),+][0]
            }

            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }

            /// Every row not yet sent, as one table.
            pub fn take_all(&mut self) -> $crate::outputs::report::Table {
                self.take(usize::MAX)
            }

            /// Move `other`'s rows after these.
            pub fn append(&mut self, other: &mut Self) {
                $(self.$col.append(&mut other.$col);)+
            }

            /// The first `n` rows (at most) as a batch.
            fn take(&mut self, n: usize) -> $crate::outputs::report::Table {
                self.sent = true;
                let n = n.min(self.len());
                $crate::outputs::report::Table {
                    name: $name,
                    columns: vec![$((
                        stringify!($col),
                        $crate::outputs::report::Column::$kind({
                            let rest = self.$col.split_off(n);
                            std::mem::replace(&mut self.$col, rest)
                        }),
                    )),+],
                }
            }

            /// Hand over full batches of exactly `BATCH_ROWS` rows, so that
            /// batch boundaries fall at the same rows in every run.
            #[inline]
            pub fn flush_full(&mut self, out: &mut $crate::outputs::output::Output) {
                while self.len() >= $crate::outputs::output::BATCH_ROWS {
                    out.send(self.take($crate::outputs::output::BATCH_ROWS));
                }
            }

            /// Hand over what is left, and an empty batch if none went yet.
            pub fn flush(&mut self, out: &mut $crate::outputs::output::Output) {
                self.flush_full(out);
                if !self.is_empty() || !self.sent {
                    out.send(self.take(usize::MAX));
                }
            }
        }
    };
}
pub(crate) use table_rows;
