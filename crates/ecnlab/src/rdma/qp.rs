//! A RoCEv2 reliable-connection queue pair's two ends, as counters: the
//! sender's next and oldest unacknowledged byte, the receiver's expected
//! one. No handshake; the receiver takes only in-order packets, answers
//! each (or each `ack_every` bytes) with an ACK and the first one past a
//! hole with a NACK naming the byte it expects; the sender then goes back
//! to it (go-back-N) or to the message's start (go-back-0). A timeout
//! (the NIC's local ACK timer) goes back to the oldest unacknowledged byte.
//!
//! Per-packet functions: `QpSender::take`, `QpSender::on_ack`,
//! `QpSender::on_nack`, `QpReceiver::on_data`. Tests: below.

use crate::units::Time;

/// Where a NACK sends the sender back to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GoBack {
    /// The byte the receiver expects (go-back-N).
    N,
    /// The message's first byte (go-back-0).
    Zero,
}

#[derive(Clone, Debug, Default)]
pub struct QpSender {
    /// The message's bytes (u64::MAX: never ends).
    pub size: u64,
    pub snd_nxt: u64,
    pub snd_una: u64,
    /// Highest byte ever sent, for counting retransmissions.
    pub snd_max: u64,
    /// Retransmitted packets.
    pub retransmits: u32,
    pub timeouts: u32,
}

impl QpSender {
    pub fn new(size: u64) -> QpSender {
        QpSender { size, ..QpSender::default() }
    }

    /// Bytes sent and not yet acknowledged.
    #[inline]
    pub fn in_flight(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }

    /// Whether a packet may go: data left, and within `window` bytes in
    /// flight (u64::MAX: no window).
    #[inline]
    pub fn has_data(&self, window: u64) -> bool {
        self.snd_nxt < self.size && self.in_flight() < window
    }

    /// The next packet's (first byte, payload) of at most `mss` bytes.
    #[inline]
    pub fn take(&mut self, mss: u32) -> (u64, u32) {
        let seq = self.snd_nxt;
        let len = (self.size - seq).min(mss as u64) as u32;
        if seq < self.snd_max {
            self.retransmits += 1;
        }
        self.snd_nxt += len as u64;
        self.snd_max = self.snd_max.max(self.snd_nxt);
        (seq, len)
    }

    /// A cumulative ACK of every byte below `ack`: the bytes newly acked.
    #[inline]
    pub fn on_ack(&mut self, ack: u64) -> u64 {
        if ack <= self.snd_una {
            return 0;
        }
        let newly = ack - self.snd_una;
        self.snd_una = ack;
        self.snd_nxt = self.snd_nxt.max(ack);
        newly
    }

    /// A NACK: the receiver has every byte below `expects` and dropped a
    /// later one. True when the sender went back.
    pub fn on_nack(&mut self, expects: u64, how: GoBack) -> bool {
        self.on_ack(expects);
        let to = match how {
            GoBack::N => expects,
            GoBack::Zero => 0,
        };
        if to >= self.snd_nxt {
            return false;
        }
        self.snd_nxt = to.max(if how == GoBack::N { self.snd_una } else { 0 });
        true
    }

    /// The local ACK timer fired with data outstanding: go back to the
    /// oldest unacknowledged byte.
    pub fn on_timeout(&mut self) {
        self.timeouts += 1;
        self.snd_nxt = self.snd_una;
    }

    /// Every byte of the message is acknowledged.
    #[inline]
    pub fn done(&self) -> bool {
        self.snd_una >= self.size
    }
}

/// What the receiver answers to a data packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RxOut {
    /// Payload bytes newly in order.
    pub delivered: u64,
    /// Send an ACK of every byte below this.
    pub ack: Option<u64>,
    /// Send a NACK naming this byte.
    pub nack: Option<u64>,
}

#[derive(Clone, Debug, Default)]
pub struct QpReceiver {
    pub expected: u64,
    /// Bytes delivered since the last ACK (ACK coalescing).
    unacked: u64,
    /// The last NACK: the byte it named and when.
    nacked: Option<(u64, Time)>,
}

impl QpReceiver {
    /// Data [seq, seq + len) arrives at `now`. `ack_every`: bytes per ACK
    /// (1: every packet); a NACK for the same expected byte at most once
    /// per `nack_gap`.
    pub fn on_data(&mut self, seq: u64, len: u32, now: Time, ack_every: u64, nack_gap: Time) -> RxOut {
        let end = seq + len as u64;
        if seq > self.expected {
            // Out of order: dropped (no reordering buffer), NACKed.
            let again = matches!(self.nacked, Some((e, t)) if e == self.expected && now < t + nack_gap);
            if again {
                return RxOut::default();
            }
            self.nacked = Some((self.expected, now));
            return RxOut { nack: Some(self.expected), ..RxOut::default() };
        }
        if end <= self.expected {
            // A copy of what it has (after a go-back): ACK it again, so a
            // sender that lost the ACK learns where the receiver is.
            return RxOut { ack: Some(self.expected), ..RxOut::default() };
        }
        let delivered = end - self.expected;
        self.expected = end;
        self.unacked += delivered;
        if self.unacked >= ack_every {
            self.unacked = 0;
            return RxOut { delivered, ack: Some(end), nack: None };
        }
        RxOut { delivered, ..RxOut::default() }
    }

    /// The message's last byte arrived: ACK what is left unacknowledged.
    pub fn flush(&mut self) -> Option<u64> {
        (std::mem::take(&mut self.unacked) > 0).then_some(self.expected)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lost packet: the receiver NACKs the hole once per gap, the sender
    /// goes back to it and resends it and everything after (go-back-N);
    /// go-back-0 resends the message from its start.
    #[test]
    fn go_back_n_after_a_nack() {
        let mut tx = QpSender::new(10_000);
        let mut rx = QpReceiver::default();
        let sent: Vec<(u64, u32)> = (0..5).map(|_| tx.take(1000)).collect();
        // Packet 1 (bytes 1000-1999) is lost.
        assert_eq!(rx.on_data(sent[0].0, 1000, 0, 1, 500).ack, Some(1000));
        let r = rx.on_data(sent[2].0, 1000, 10, 1, 500);
        assert_eq!(r, RxOut { nack: Some(1000), ..RxOut::default() });
        assert_eq!(rx.on_data(sent[3].0, 1000, 20, 1, 500), RxOut::default(), "one NACK per gap");
        assert!(tx.on_nack(1000, GoBack::N));
        assert_eq!((tx.snd_una, tx.snd_nxt), (1000, 1000));
        assert_eq!(tx.take(1000), (1000, 1000));
        assert_eq!(tx.retransmits, 1);
        assert_eq!(rx.on_data(1000, 1000, 30, 1, 500).ack, Some(2000));
        // The sender resends 2000.. which the receiver now takes in order.
        assert_eq!(rx.on_data(tx.take(1000).0, 1000, 40, 1, 500).delivered, 1000);
        let mut zero = QpSender::new(10_000);
        (0..5).for_each(|_| {
            zero.take(1000);
        });
        assert!(zero.on_nack(3000, GoBack::Zero));
        assert_eq!((zero.snd_una, zero.snd_nxt), (3000, 0));
    }

    /// ACK coalescing: one ACK per `ack_every` bytes, the rest at the end.
    #[test]
    fn acks_every_n_bytes_and_the_last() {
        let mut rx = QpReceiver::default();
        let acks: Vec<Option<u64>> = (0..5).map(|i| rx.on_data(i * 1000, 1000, 0, 4000, 500).ack).collect();
        assert_eq!(acks, [None, None, None, Some(4000), None]);
        assert_eq!(rx.flush(), Some(5000));
        assert_eq!(rx.flush(), None);
    }

    /// A window holds the sender at `window` bytes in flight; the last
    /// packet is short.
    #[test]
    fn window_and_last_packet() {
        let mut tx = QpSender::new(2500);
        assert!(tx.has_data(2000));
        tx.take(1000);
        tx.take(1000);
        assert!(!tx.has_data(2000));
        assert_eq!(tx.on_ack(1000), 1000);
        assert_eq!(tx.take(1000), (2000, 500));
        assert!(!tx.has_data(u64::MAX));
        tx.on_ack(2500);
        assert!(tx.done());
    }
}
