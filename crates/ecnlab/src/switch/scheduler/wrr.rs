//! Weighted round robin with byte quanta: each turn a queue may send up to
//! its quantum, and what it leaves unused is forfeited (MQ-ECN §3.3.2 and
//! §4.2: DWRR with the deficit reset whenever a turn ends).

use super::Dwrr;

pub fn wrr(quantum: Vec<u64>) -> Dwrr {
    Dwrr::new(quantum, false)
}
