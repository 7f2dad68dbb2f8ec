//! Every GPU primitive against its plain-Rust reference on sizes 0, 1, 7, 257, 2^20+3 and
//! random data.
use rand::Rng;
use supple::cpu_reference as reference;
use supple::primitives::{
    Compact, RadixSort, Reduce, ReduceOp, ReduceResult, Scan, ScanKind, SortKeys, Tuning,
};
use supple::vk::{BufferUsage, CompileOptions, Context, Graph};
use supple_gpu_tests::{assert_no_validation_errors, context, rng};

const SIZES: [usize; 5] = [0, 1, 7, 257, (1 << 20) + 3];

/// Both launch shapes: the device's default and the GPU-style coalesced one (on lavapipe the
/// default is the lane-serial CPU shape, so both kernel paths are checked).
fn tunings(ctx: &Context) -> [Tuning; 2] {
    [Tuning::from_env(ctx.caps()), Tuning::gpu_style(ctx.caps())]
}

/// The radix-sort shapes under test: the device default (sized per sort), the GPU-style path,
/// and both with explicit 11-bit digits (lane-serial with few keys per invocation, so small
/// sorts take the interleaved-pairs passes too).
fn radix_tunings(ctx: &Context) -> [Tuning; 4] {
    let [device, gpu] = tunings(ctx);
    let lane_serial_11 = Tuning {
        radix_bits: 11,
        radix_items: 256,
        lane_serial: true,
        radix_workgroup: ctx.caps().subgroup_size.max(1),
        ..device
    };
    [
        device,
        gpu,
        lane_serial_11,
        Tuning {
            radix_bits: 11,
            ..gpu
        },
    ]
}

/// Sorts `keys`/`vals` by their low `bits` bits on the GPU with `tuning`; returns the buffers'
/// first `n` entries.
fn gpu_sort<K: bytemuck::Pod>(
    ctx: &Context,
    tuning: Tuning,
    keys: &[K],
    vals: &[u32],
    bits: u32,
) -> (Vec<K>, Vec<u32>) {
    let n = keys.len();
    let width = if std::mem::size_of::<K>() == 8 {
        SortKeys::U64
    } else {
        SortKeys::U32
    };
    let k = ctx
        .upload_buffer("keys", keys, BufferUsage::STORAGE)
        .unwrap();
    let v = ctx
        .upload_buffer("vals", vals, BufferUsage::STORAGE)
        .unwrap();
    let sort = RadixSort::with_tuning(ctx, n, width, tuning).unwrap();
    let mut g = Graph::new("sort");
    sort.record(&mut g, &k, &v, n, bits);
    run(ctx, g);
    (
        k.read().unwrap()[..n].to_vec(),
        v.read().unwrap()[..n].to_vec(),
    )
}

fn run(ctx: &Context, g: Graph) {
    g.compile(ctx, CompileOptions::default())
        .unwrap()
        .run()
        .unwrap();
}

#[test]
fn scan_matches_reference() {
    let ctx = context(false);
    let mut r = rng(1);
    for &n in &SIZES {
        let data: Vec<u32> = (0..n).map(|_| r.random_range(0..1000)).collect();
        let input = ctx
            .upload_buffer("in", &data, BufferUsage::STORAGE)
            .unwrap();
        let out = ctx
            .create_buffer::<u32>("out", n, BufferUsage::STORAGE)
            .unwrap();
        for (tuning, kind) in tunings(&ctx)
            .into_iter()
            .flat_map(|t| [(t, ScanKind::Exclusive), (t, ScanKind::Inclusive)])
        {
            let scan = Scan::with_tuning(&ctx, n, tuning).unwrap();
            let mut g = Graph::new("scan");
            scan.record(&mut g, &input, &out, n, kind);
            run(&ctx, g);
            let want = match kind {
                ScanKind::Exclusive => reference::scan::exclusive_scan(&data),
                ScanKind::Inclusive => reference::scan::inclusive_scan(&data),
            };
            assert_eq!(
                out.read().unwrap()[..n],
                want[..],
                "n = {n}, {kind:?}, {tuning:?}"
            );
        }
    }
    // Wrapping arithmetic, as the reference.
    let data = vec![u32::MAX / 2; 1000];
    let input = ctx
        .upload_buffer("in", &data, BufferUsage::STORAGE)
        .unwrap();
    let scan = Scan::new(&ctx, 1000).unwrap();
    let mut g = Graph::new("scan-inplace");
    scan.record(&mut g, &input, &input, 1000, ScanKind::Inclusive);
    run(&ctx, g);
    assert_eq!(
        input.read().unwrap(),
        reference::scan::inclusive_scan(&data)
    );
    assert_no_validation_errors(&ctx);
}

#[test]
fn compaction_matches_reference_and_counts_on_device() {
    let ctx = context(true);
    let mut r = rng(2);
    for &n in &SIZES {
        for (tuning, density) in tunings(&ctx)
            .into_iter()
            .flat_map(|t| [(t, 0.0), (t, 0.3), (t, 1.0)])
        {
            let flags: Vec<u32> = (0..n)
                .map(|_| {
                    if r.random_bool(density) {
                        r.random_range(1..5)
                    } else {
                        0
                    }
                })
                .collect();
            let values: Vec<u32> = (0..n as u32).map(|i| i * 3 + 1).collect();
            let f = ctx
                .upload_buffer("flags", &flags, BufferUsage::STORAGE)
                .unwrap();
            let v = ctx
                .upload_buffer("values", &values, BufferUsage::STORAGE)
                .unwrap();
            let out = ctx
                .create_buffer::<u32>("out", n, BufferUsage::STORAGE)
                .unwrap();
            let count = ctx
                .create_buffer::<u32>("count", 1, BufferUsage::STORAGE)
                .unwrap();
            let args = ctx
                .create_buffer::<u32>("args", 3, BufferUsage::INDIRECT)
                .unwrap();
            let c = Compact::with_tuning(&ctx, n, tuning).unwrap();
            let mut g = Graph::new("compact");
            c.record(&mut g, &f, &v, &out, n);
            c.record_count_copy(&mut g, n, &count);
            c.record_indirect_args(&mut g, n, 64, &args);
            run(&ctx, g);
            let want = reference::compact::compact(&flags, &values);
            assert_eq!(c.read_count(n).unwrap() as usize, want.len());
            assert_eq!(count.read().unwrap()[0] as usize, want.len());
            assert_eq!(
                args.read().unwrap(),
                vec![want.len().div_ceil(64) as u32, 1, 1]
            );
            assert_eq!(
                out.read().unwrap()[..want.len()],
                want[..],
                "n = {n}, density {density}"
            );
        }
    }
    assert_no_validation_errors(&ctx);
}

/// A scan of the first n words of a longer array leaves the words after n alone: the partial
/// last quad is written word by word (a 16-byte store would clobber up to 3 neighbours, which
/// may belong to another slice, and crosses the bound range of an exact slice).
#[test]
fn scan_leaves_the_words_after_n_untouched() {
    let ctx = context(false);
    let mut r = rng(9);
    const SENTINEL: u32 = 0xDEAD_BEEF;
    for n in [1usize, 2, 3, 5, 7, 257, 4097 + 2] {
        let data: Vec<u32> = (0..n + 5).map(|_| r.random_range(0..1000)).collect();
        let input = ctx
            .upload_buffer("in", &data, BufferUsage::STORAGE)
            .unwrap();
        for (tuning, kind) in tunings(&ctx)
            .into_iter()
            .flat_map(|t| [(t, ScanKind::Exclusive), (t, ScanKind::Inclusive)])
        {
            let out = ctx
                .upload_buffer("out", &vec![SENTINEL; n + 5], BufferUsage::STORAGE)
                .unwrap();
            let scan = Scan::with_tuning(&ctx, n, tuning).unwrap();
            let mut g = Graph::new("scan");
            scan.record(&mut g, &input, &out, n, kind);
            run(&ctx, g);
            let got = out.read().unwrap();
            let want = match kind {
                ScanKind::Exclusive => reference::scan::exclusive_scan(&data[..n]),
                ScanKind::Inclusive => reference::scan::inclusive_scan(&data[..n]),
            };
            assert_eq!(got[..n], want[..], "n = {n}, {kind:?}, {tuning:?}");
            assert_eq!(
                got[n..],
                [SENTINEL; 5],
                "words after n, n = {n}, {kind:?}, {tuning:?}"
            );
        }
    }
    assert_no_validation_errors(&ctx);
}

#[test]
fn radix_sort_u32_is_stable_and_matches_reference() {
    let ctx = context(false);
    let mut r = rng(3);
    for &n in &SIZES {
        // Few distinct keys make stability visible.
        for (tuning, key_range) in radix_tunings(&ctx)
            .into_iter()
            .flat_map(|t| [(t, 16u32), (t, u32::MAX)])
        {
            let keys: Vec<u32> = (0..n).map(|_| r.random_range(0..key_range)).collect();
            let vals: Vec<u32> = (0..n as u32).collect();
            let (gk, gv) = gpu_sort(&ctx, tuning, &keys, &vals, 32);
            let (wk, wv) = reference::radix_sort::radix_sort(&keys, &vals, 32);
            let mut std_sorted: Vec<(u32, u32)> =
                keys.iter().copied().zip(vals.iter().copied()).collect();
            std_sorted.sort_by_key(|p| p.0);
            assert_eq!(
                wk,
                std_sorted.iter().map(|p| p.0).collect::<Vec<_>>(),
                "reference is a stable sort"
            );
            assert_eq!(gk, wk, "keys, n = {n}");
            assert_eq!(gv, wv, "values (stability), n = {n}");
        }
    }
    assert_no_validation_errors(&ctx);
}

#[test]
fn radix_sort_u64_and_partial_key_bits() {
    let ctx = context(true);
    let mut r = rng(4);
    for (tuning, &n) in radix_tunings(&ctx)
        .into_iter()
        .flat_map(|t| SIZES.iter().map(move |n| (t, n)))
    {
        let keys: Vec<u64> = (0..n)
            .map(|_| r.random::<u64>() >> r.random_range(0..40))
            .collect();
        let vals: Vec<u32> = (0..n as u32).collect();
        let (gk, gv) = gpu_sort(&ctx, tuning, &keys, &vals, 64);
        let (wk, wv) = reference::radix_sort::radix_sort(&keys, &vals, 64);
        assert_eq!(gk, wk, "u64 keys, n = {n}");
        assert_eq!(gv, wv, "u64 values, n = {n}");
    }
    // One-pass sorts at sizes that are not multiples of 4 (the temporaries are slices of one
    // workspace buffer; their offsets must stay aligned).
    for tuning in radix_tunings(&ctx) {
        for n in [1usize, 7, 257, 1001] {
            let keys: Vec<u32> = (0..n).map(|_| r.random_range(0..256)).collect();
            let vals: Vec<u32> = (0..n as u32).collect();
            let (gk, gv) = gpu_sort(&ctx, tuning, &keys, &vals, 8);
            let (wk, wv) = reference::radix_sort::radix_sort(&keys, &vals, 8);
            assert_eq!((gk, gv), (wk, wv), "one pass, n = {n}, {tuning:?}");
            let keys: Vec<u64> = keys.iter().map(|&k| k as u64).collect();
            let (gk, gv) = gpu_sort(&ctx, tuning, &keys, &vals, 8);
            let (wk, wv) = reference::radix_sort::radix_sort(&keys, &vals, 8);
            assert_eq!(
                (gk, gv),
                (wk, wv),
                "one pass, u64 keys, n = {n}, {tuning:?}"
            );
        }
    }
    // Partial keys: 24 bits are 3 passes of 8 (odd: split layouts end with the copy back) or
    // 3 of 11; 11 bits are 1 or 2 passes (a single pass never uses interleaved pairs).
    let n = 10_000;
    for tuning in radix_tunings(&ctx) {
        for bits in [24, 11, 8] {
            let keys: Vec<u32> = (0..n).map(|_| r.random_range(0..1 << bits)).collect();
            let vals: Vec<u32> = (0..n as u32).collect();
            let (gk, gv) = gpu_sort(&ctx, tuning, &keys, &vals, bits);
            let (wk, wv) = reference::radix_sort::radix_sort(&keys, &vals, bits);
            let (k11, v11) = reference::radix_sort::radix_sort_digits(&keys, &vals, bits, 11);
            assert_eq!((&k11, &v11), (&wk, &wv), "the reference at 8 and 11 bits");
            assert_eq!(gk, wk, "{bits}-bit keys, {tuning:?}");
            assert_eq!(gv, wv, "{bits}-bit values, {tuning:?}");
        }
    }
    assert_no_validation_errors(&ctx);
}

#[test]
fn reductions_match_reference() {
    let ctx = context(false);
    let mut r = rng(5);
    for (tuning, &n) in tunings(&ctx)
        .into_iter()
        .flat_map(|t| SIZES.iter().map(move |n| (t, n)))
    {
        let mut data: Vec<f32> = (0..n).map(|_| r.random_range(-1000.0f32..1000.0)).collect();
        if n > 10 {
            data[n / 3] = f32::NAN; // ignored by min/max/argmin
            let m = reference::reduce::min(&data);
            data[n - 2] = m; // a tie: argmin must report the lower index
        }
        let input = ctx
            .upload_buffer("in", &data, BufferUsage::STORAGE)
            .unwrap();
        let out = ctx
            .create_buffer::<ReduceResult>("out", 4, BufferUsage::STORAGE)
            .unwrap();
        let red = Reduce::with_tuning(&ctx, n, tuning).unwrap();
        let mut g = Graph::new("reduce");
        for (slot, op) in [ReduceOp::Min, ReduceOp::Max, ReduceOp::ArgMin]
            .into_iter()
            .enumerate()
        {
            red.record(&mut g, &input, n, op, &out, slot);
        }
        run(&ctx, g);
        let got = out.read().unwrap();
        assert_eq!(got[0].value, reference::reduce::min(&data), "min n={n}");
        assert_eq!(got[1].value, reference::reduce::max(&data), "max n={n}");
        let (v, i) = reference::reduce::argmin(&data);
        assert_eq!((got[2].value, got[2].index), (v, i), "argmin n={n}");

        let clean: Vec<f32> = data
            .iter()
            .map(|x| if x.is_nan() { 0.5 } else { *x })
            .collect();
        input.write(&clean).unwrap();
        let mut g = Graph::new("sum");
        red.record(&mut g, &input, n, ReduceOp::Sum, &out, 3);
        run(&ctx, g);
        let want = reference::reduce::sum(&clean);
        let scale: f64 = clean.iter().map(|x| x.abs() as f64).sum::<f64>().max(1.0);
        let got = out.read().unwrap()[3].value as f64;
        assert!(
            (got - want).abs() <= 1e-5 * scale,
            "sum n={n}: {got} vs {want}"
        );
        // Deterministic: the same input gives the same bits.
        let mut g = Graph::new("sum-again");
        red.record(&mut g, &input, n, ReduceOp::Sum, &out, 0);
        run(&ctx, g);
        assert_eq!(
            out.read().unwrap()[0].value.to_bits(),
            (got as f32).to_bits()
        );
    }
    assert_no_validation_errors(&ctx);
}
