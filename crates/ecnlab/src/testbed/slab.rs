//! The bytes of the frames waiting in the switch, kept beside the engine's
//! packet arena and addressed by the same id: the qdisc moves ids, the
//! slab holds what goes back on the wire. Slots are reused as the arena
//! reuses ids, so once it has grown to the peak backlog nothing allocates.

/// The largest frame kept: an Ethernet header and a 1500-byte IP packet,
/// with room to spare. Larger frames (a segmentation offload the host
/// should have had turned off) are counted and dropped.
pub const FRAME_MAX: usize = 2048;

#[derive(Default)]
pub struct FrameSlab {
    bytes: Vec<u8>,
    lens: Vec<u16>,
}

impl FrameSlab {
    /// Keep `frame` (at most FRAME_MAX bytes) as packet `id`'s.
    #[inline]
    pub fn put(&mut self, id: u32, frame: &[u8]) {
        let i = id as usize;
        if i >= self.lens.len() {
            self.lens.resize(i + 1, 0);
            self.bytes.resize((i + 1) * FRAME_MAX, 0);
        }
        self.bytes[i * FRAME_MAX..i * FRAME_MAX + frame.len()].copy_from_slice(frame);
        self.lens[i] = frame.len() as u16;
    }

    #[inline]
    pub fn get(&self, id: u32) -> &[u8] {
        let i = id as usize;
        &self.bytes[i * FRAME_MAX..i * FRAME_MAX + self.lens[i] as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: u32) -> &mut [u8] {
        let i = id as usize;
        &mut self.bytes[i * FRAME_MAX..i * FRAME_MAX + self.lens[i] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_keep_their_frames_apart() {
        let mut s = FrameSlab::default();
        s.put(3, &[1, 2, 3]);
        s.put(0, &[9; 1514]);
        assert_eq!(s.get(3), &[1, 2, 3]);
        assert_eq!(s.get(0).len(), 1514);
        s.get_mut(3)[0] = 7;
        s.put(0, &[5]);
        assert_eq!((s.get(3), s.get(0)), (&[7u8, 2, 3][..], &[5u8][..]));
    }
}
