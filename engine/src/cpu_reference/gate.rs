//! References of the gated-section kernels (`kernels/primitives/gate_args.comp`,
//! `fill_u32.comp`, `copy_u32.comp`; host side `vk::GatedGraph`).

/// The indirect arguments `gate_args.comp` writes into `args[first .. first + counts.len()]`:
/// the recorded counts while `flags[word] & mask` is non-zero, zero workgroups otherwise.
pub fn gate_args(flags: &[u32], word: usize, mask: u32, counts: &[[u32; 4]]) -> Vec<[u32; 4]> {
    let open = flags.get(word).is_some_and(|f| f & mask != 0);
    counts
        .iter()
        .map(|c| if open { *c } else { [0, 1, 1, 0] })
        .collect()
}

/// `fill_u32.comp`: the first `n` words of `dst` set to `value`.
pub fn fill_u32(dst: &mut [u32], n: usize, value: u32) {
    for d in dst.iter_mut().take(n) {
        *d = value;
    }
}

/// `copy_u32.comp`: the first `n` words of `src` copied to `dst`.
pub fn copy_u32(src: &[u32], dst: &mut [u32], n: usize) {
    for (d, s) in dst.iter_mut().zip(src).take(n) {
        *d = *s;
    }
}
