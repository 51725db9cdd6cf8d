//! HMAC-SHA256 (RFC 2104): what proves a disk cache entry was written by a process
//! holding the user's secret.

use sha2::{Digest, Sha256};

/// SHA-256's block size in bytes.
const BLOCK: usize = 64;
/// The length of a MAC in bytes.
pub(super) const LEN: usize = 32;

/// HMAC-SHA256 of the concatenated `parts` under `key` (at most one block long, as
/// every key here is: the 32-byte secret).
pub(super) fn hmac(key: &[u8], parts: &[&[u8]]) -> [u8; LEN] {
    assert!(key.len() <= BLOCK, "HMAC keys here are at most one block");
    // The key, padded with zeros to a block, XORed with the pad byte.
    let pad = |byte: u8| {
        let mut block = [byte; BLOCK];
        for (b, k) in block.iter_mut().zip(key) {
            *b ^= k;
        }
        block
    };
    let mut inner = Sha256::new();
    inner.update(pad(0x36));
    for part in parts {
        inner.update(part);
    }
    let mut outer = Sha256::new();
    outer.update(pad(0x5c));
    outer.update(inner.finalize());
    outer.finalize().into()
}

/// Whether `a` and `b` are equal, in time that does not depend on where they differ.
pub(super) fn equal(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn rfc_4231_test_vectors() {
        // Test case 1.
        assert_eq!(
            hex(&hmac(&[0x0b; 20], &[b"Hi There"])),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
        // Test case 2, the message given in two parts.
        assert_eq!(
            hex(&hmac(b"Jefe", &[b"what do ya want ", b"for nothing?"])),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn equal_compares_every_byte_and_the_length() {
        assert!(equal(b"abc", b"abc"));
        assert!(!equal(b"abc", b"abd"));
        assert!(!equal(b"abc", b"ab"));
    }
}
