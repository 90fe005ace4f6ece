//! Columnar outputs: a run's tables and its summary.

use serde_json::{Map, Value};

pub enum Column {
    U32(Vec<u32>),
    U64(Vec<u64>),
    I64(Vec<i64>),
    F64(Vec<f64>),
    Str(Vec<String>),
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::U32(v) => v.len(),
            Column::U64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::F64(v) => v.len(),
            Column::Str(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The values at `order`, in that order.
    pub fn select(&self, order: &[usize]) -> Column {
        match self {
            Column::U32(v) => Column::U32(order.iter().map(|&i| v[i]).collect()),
            Column::U64(v) => Column::U64(order.iter().map(|&i| v[i]).collect()),
            Column::I64(v) => Column::I64(order.iter().map(|&i| v[i]).collect()),
            Column::F64(v) => Column::F64(order.iter().map(|&i| v[i]).collect()),
            Column::Str(v) => Column::Str(order.iter().map(|&i| v[i].clone()).collect()),
        }
    }

    /// Append `other`'s values; both must be of one type.
    pub fn append(&mut self, other: Column) {
        match (self, other) {
            (Column::U32(a), Column::U32(b)) => a.extend(b),
            (Column::U64(a), Column::U64(b)) => a.extend(b),
            (Column::I64(a), Column::I64(b)) => a.extend(b),
            (Column::F64(a), Column::F64(b)) => a.extend(b),
            (Column::Str(a), Column::Str(b)) => a.extend(b),
            _ => panic!("appending a column of another type"),
        }
    }
}

pub struct Table {
    pub name: &'static str,
    pub columns: Vec<(&'static str, Column)>,
}

impl Table {
    pub fn rows(&self) -> usize {
        self.columns.first().map(|c| c.1.len()).unwrap_or(0)
    }
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.0 == name).map(|c| &c.1)
    }

    /// Append the rows of `more`, a batch of the same table.
    pub fn append(&mut self, more: Table) {
        debug_assert_eq!(self.name, more.name);
        for ((_, a), (_, b)) in self.columns.iter_mut().zip(more.columns) {
            a.append(b);
        }
    }
}

/// A whole run in memory: its summary, every table, and the captures.
pub struct Report {
    pub summary: Map<String, Value>,
    pub tables: Vec<Table>,
    /// (switch port name, pcap file bytes) per `run.pcap` entry.
    pub captures: Vec<(String, Vec<u8>)>,
}

impl Report {
    pub fn table(&self, name: &str) -> Option<&Table> {
        self.tables.iter().find(|t| t.name == name)
    }
}
