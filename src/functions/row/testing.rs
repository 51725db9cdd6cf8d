//! For the tests: a row function's JIT face run over one block of string
//! arguments, as a kernel calls it.

use broadhead_codegen::{CallArg, CallOut, LANES};

use super::{Arena, RowImpl};

/// Lanes per block.
pub(super) const N: usize = LANES as usize;

/// The JIT's face of `f` over one block of string arguments (`None`: NULL),
/// computing the lanes `compute`: each lane's value (read from its view) and
/// the failed lanes.
pub(super) fn run_block(
    f: &RowImpl,
    args: &[Vec<Option<&str>>],
    compute: u64,
    arena: &mut Arena,
) -> (Vec<Option<String>>, u64, Vec<(u64, u64)>) {
    let views: Vec<(Vec<u64>, Vec<u64>, u64)> = args
        .iter()
        .map(|a| {
            let mut v = (vec![0u64; N], vec![0u64; N], 0u64);
            for (i, s) in a.iter().enumerate() {
                // A NULL lane's view is of other bytes, which must not be read.
                let bytes = s.unwrap_or("NULL!");
                (v.0[i], v.1[i]) = (bytes.as_ptr() as u64, bytes.len() as u64);
                v.2 |= (s.is_some() as u64) << i;
            }
            v
        })
        .collect();
    let call_args: Vec<CallArg> = views
        .iter()
        .map(|(values, lens, valid)| CallArg {
            values: values.as_ptr() as *const u8,
            lens: lens.as_ptr(),
            valid: *valid,
        })
        .collect();
    let (mut values, mut lens) = (vec![0u64; N], vec![0u64; N]);
    let mut out = CallOut {
        values: values.as_mut_ptr() as *mut u8,
        lens: lens.as_mut_ptr(),
        valid: compute,
        row: 0,
    };
    let failed = (f.block)(arena, &call_args, &mut out);
    let shown = (0..N)
        .map(|i| {
            (out.valid >> i & 1 == 1).then(|| {
                // SAFETY (test): a valid lane's view is of the arena's bytes.
                let bytes =
                    unsafe { std::slice::from_raw_parts(values[i] as *const u8, lens[i] as usize) };
                String::from_utf8(bytes.to_vec()).unwrap()
            })
        })
        .collect();
    let spans = (0..N)
        .filter(|i| out.valid >> i & 1 == 1)
        .map(|i| (values[i], lens[i]))
        .collect();
    (shown, failed, spans)
}
