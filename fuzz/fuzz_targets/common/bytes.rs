//! What the fuzz targets share: reading choices off the input bytes.

/// Reads bytes off the input; zeros once it is used up.
pub struct Bytes<'a>(pub &'a [u8]);

impl Bytes<'_> {
    pub fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((b, rest)) => {
                self.0 = rest;
                *b
            }
            None => 0,
        }
    }
    pub fn below(&mut self, n: u32) -> u32 {
        u32::from(self.byte()) % n
    }
}

pub const SHARPNESS: [f32; 8] = [0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 4.5, 10.0];
