//! `supple bench primitives`: throughput of every GPU primitive at several sizes, measured with
//! GPU timestamps in one run on the chosen device, next to two bandwidth baselines (a vec4
//! compute copy and vkCmdCopyBuffer), the per-dispatch cost of a chain of tiny dependent
//! dispatches, and Rust's `sort_unstable_by_key` on the same data as the 4M radix sort.

use crate::stats::Stats;
use serde::Serialize;
use supple::primitives::{
    Compact, RadixSort, Reduce, ReduceOp, ReduceResult, Scan, ScanKind, SortKeys, Tuning,
};
use supple::vk::{
    ids, BufferSlice, BufferUsage, CompileOptions, CompiledGraph, Context, Dispatch, GpuBuffer,
    Graph,
};

/// Options of `supple bench primitives`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print one JSON object on stdout (progress goes to stderr).
    #[arg(long)]
    json: bool,
    /// Element counts to measure (suffixes k and M are powers of two).
    #[arg(long, value_delimiter = ',', default_value = "1M,4M,16M")]
    sizes: Vec<String>,
    /// Timed runs per measurement (min, median and max are reported; radix sorts run at most 3).
    #[arg(long, default_value_t = 5)]
    repeat: usize,
}

#[derive(Serialize)]
struct Row {
    primitive: &'static str,
    n: usize,
    elements_per_s: f64,
    gbps: f64,
    median_ms: f64,
    /// GPU milliseconds over the timed runs.
    ms: Stats,
    /// Radix sorts: bits per digit and keys per invocation (or per tile round) used.
    #[serde(skip_serializing_if = "Option::is_none")]
    radix_bits: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    radix_items: Option<u32>,
}

#[derive(Serialize)]
struct Report {
    device: String,
    driver: String,
    lavapipe_threads: Option<u32>,
    tuning: Tuning,
    repeat: usize,
    copy_gbps: f64,
    transfer_copy_gbps: f64,
    copy_bytes: usize,
    /// GPU milliseconds of the vec4 compute copy over the timed runs.
    copy_ms: Stats,
    /// GPU milliseconds of vkCmdCopyBuffer over the timed runs.
    transfer_copy_ms: Stats,
    dispatch_overhead_us: f64,
    dispatch_overhead_us_min: f64,
    /// Microseconds per dispatch of the 1,000-dispatch chain over the timed runs.
    dispatch_overhead_us_stats: Stats,
    cpu_sort_unstable_elements_per_s: f64,
    radix_sort_4m_elements_per_s: Option<f64>,
    results: Vec<Row>,
}

fn parse_size(s: &str) -> Result<usize, String> {
    let s = s.trim();
    let (num, mul) = match s.chars().last() {
        Some('M') | Some('m') => (&s[..s.len() - 1], 1usize << 20),
        Some('k') | Some('K') => (&s[..s.len() - 1], 1usize << 10),
        _ => (s, 1),
    };
    num.parse::<usize>()
        .map(|v| v * mul)
        .map_err(|_| format!("--sizes: '{s}' is not a size like 4M, 64k or 1000"))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// GPU milliseconds of `repeat` runs (after one warm-up run).
fn time_graph(c: &CompiledGraph, repeat: usize) -> Result<Stats, String> {
    time_graph_samples(c, repeat).map(|v| Stats::of(&v))
}

/// GPU milliseconds of each of `repeat` runs (after one warm-up run).
fn time_graph_samples(c: &CompiledGraph, repeat: usize) -> Result<Vec<f64>, String> {
    time_graph_samples_after(c, repeat, None)
}

/// Like [`time_graph_samples`], with an untimed graph (`before`, e.g. restoring the input) run
/// before every run.
fn time_graph_samples_after(
    c: &CompiledGraph,
    repeat: usize,
    before: Option<&CompiledGraph>,
) -> Result<Vec<f64>, String> {
    let prepare = || -> Result<(), String> {
        if let Some(b) = before {
            b.run().map_err(|e| e.to_string())?;
        }
        Ok(())
    };
    prepare()?;
    c.run().map_err(|e| e.to_string())?;
    let mut t = Vec::new();
    for _ in 0..repeat.max(1) {
        prepare()?;
        c.run().map_err(|e| e.to_string())?;
        let p = c
            .profile()
            .map_err(|e| e.to_string())?
            .ok_or("the device has no timestamps")?;
        t.push(p.total_ms);
        if std::env::var("SUPPLE_BENCH_NODES").is_ok_and(|v| v == "1") && t.len() == 1 {
            for nt in &p.nodes {
                eprintln!("[bench]     {:<28} {:>9.3} ms", nt.name, nt.gpu_ms);
            }
        }
    }
    Ok(t)
}

/// A graph copying each `(from, to)` pair of buffers (restores benchmark inputs).
fn restore_graph(
    ctx: &Context,
    pairs: &[(BufferSlice, BufferSlice)],
) -> Result<CompiledGraph, String> {
    let mut g = Graph::new("bench.restore");
    for (i, (from, to)) in pairs.iter().enumerate() {
        g.copy(format!("restore{i}"), from.clone(), to.clone());
    }
    g.compile(ctx, CompileOptions::default())
        .map_err(|e| e.to_string())
}

/// GPU milliseconds of radix sorts of `keys` with values 0..n: every timed run sorts the same
/// random pairs (restored by an untimed graph), as the host baseline does. Checks the result and
/// returns the launch shape used.
fn time_radix_sort<K: bytemuck::Pod + Ord>(
    ctx: &Context,
    keys: &[K],
    width: SortKeys,
    repeat: usize,
) -> Result<(Stats, Tuning), String> {
    let e = |e: supple::VkError| e.to_string();
    let n = keys.len();
    let vals: Vec<u32> = (0..n as u32).collect();
    let (k, v) = (buf(ctx, "keys", keys)?, buf(ctx, "vals", &vals)?);
    let (k0, v0) = (buf(ctx, "keys0", keys)?, buf(ctx, "vals0", &vals)?);
    let sort = RadixSort::new(ctx, n, width).map_err(e)?;
    let mut g = Graph::new("bench.radix");
    sort.record(&mut g, &k, &v, n, 8 * std::mem::size_of::<K>() as u32);
    let restore = restore_graph(
        ctx,
        &[((&k0).into(), (&k).into()), ((&v0).into(), (&v).into())],
    )?;
    let stats = Stats::of(&time_graph_samples_after(
        &compile(ctx, g)?,
        repeat,
        Some(&restore),
    )?);
    let mut sorted = keys.to_vec();
    sorted.sort_unstable();
    if k.read().map_err(e)? != sorted {
        return Err(format!("radix sort of {n} keys is wrong"));
    }
    Ok((stats, sort.tuning()))
}

fn rand_u32(n: usize, seed: u64) -> Vec<u32> {
    // xorshift64*: deterministic, fast, good enough for benchmark data.
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            (s.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) as u32
        })
        .collect()
}

fn compile(ctx: &Context, g: Graph) -> Result<CompiledGraph, String> {
    // Per-node timestamps only when asked for (they add a flush per node on some drivers).
    let per_node = std::env::var("SUPPLE_BENCH_NODES").is_ok_and(|v| v == "1");
    g.compile(
        ctx,
        CompileOptions {
            timestamps: per_node,
            graph_timestamps: true,
            crash_markers: false,
        },
    )
    .map_err(|e| e.to_string())
}

fn buf<T: bytemuck::Pod>(ctx: &Context, name: &str, data: &[T]) -> Result<GpuBuffer<T>, String> {
    ctx.upload_buffer(name, data, BufferUsage::STORAGE)
        .map_err(|e| e.to_string())
}

/// Runs the benchmark and prints the report.
pub fn run(args: &Args) -> Result<(), String> {
    let sizes: Vec<usize> = args
        .sizes
        .iter()
        .map(|s| parse_size(s))
        .collect::<Result<_, _>>()?;
    let mut opts = supple::ContextOptions::from_env();
    opts.validation = false;
    let ctx = Context::new(opts).map_err(|e| e.to_string())?;
    let caps = ctx.caps().clone();
    let say = |s: String| eprintln!("[bench] {s}");
    say(format!("device: {} ({})", caps.name, caps.driver));
    let e = |e: supple::VkError| e.to_string();
    let repeat = args.repeat;

    // Bandwidth baselines on 64 MiB (or the largest size requested, if smaller).
    let copy_n = sizes.iter().copied().max().unwrap_or(1 << 24).min(1 << 24);
    let src = buf(&ctx, "copy.src", &rand_u32(copy_n, 1))?;
    let dst = ctx
        .create_buffer::<u32>("copy.dst", copy_n, BufferUsage::STORAGE)
        .map_err(e)?;
    let tuning = Tuning::from_env(&caps);
    let n16 = copy_n.div_ceil(4) as u32;
    let per_group = tuning.workgroup * tuning.items;
    let mut g = Graph::new("bench.copy_vec4");
    g.dispatch(
        Dispatch::new(
            "copy_vec4",
            ids::PRIMITIVES_COPY_VEC4,
            [n16.div_ceil(per_group), 1, 1],
        )
        .workgroup_size(tuning.workgroup)
        .spec(&[tuning.items])
        .read(&src)
        .write(&dst)
        .push(&n16),
    );
    let copy_ms = time_graph(&compile(&ctx, g)?, repeat)?;
    let ms = copy_ms.median;
    if dst.read().map_err(e)? != src.read().map_err(e)? {
        return Err("copy kernel produced wrong data".into());
    }
    let bytes = (copy_n * 4 * 2) as f64;
    let copy_gbps = bytes / (ms * 1e-3) / 1e9;
    say(format!(
        "compute vec4 copy: {copy_gbps:.2} GB/s ({ms:.2} ms for {} MiB)",
        copy_n * 4 >> 20
    ));
    let mut g = Graph::new("bench.transfer_copy");
    g.copy("vkCmdCopyBuffer", &src, &dst);
    let transfer_copy_ms = time_graph(&compile(&ctx, g)?, repeat)?;
    let transfer_copy_gbps = bytes / (transfer_copy_ms.median * 1e-3) / 1e9;
    say(format!("vkCmdCopyBuffer: {transfer_copy_gbps:.2} GB/s"));
    drop((src, dst));

    // Per-dispatch overhead: 1000 tiny dependent dispatches (one subgroup each) in one graph,
    // with the barrier the graph infers between each pair.
    let lanes = caps.subgroup_size.max(1);
    let a = buf(&ctx, "chain.a", &vec![0u32; lanes as usize])?;
    let b = buf(&ctx, "chain.b", &vec![0u32; lanes as usize])?;
    let chain = 1000;
    let mut g = Graph::new("bench.dispatch_chain");
    for i in 0..chain {
        let (s, d) = if i % 2 == 0 { (&a, &b) } else { (&b, &a) };
        g.dispatch(
            Dispatch::new(format!("inc{i}"), ids::TEST_INCREMENT, [1, 1, 1])
                .workgroup_size(lanes)
                .read(s)
                .write(d)
                .push(&lanes),
        );
    }
    // Thread-pool wake-ups make this bimodal on lavapipe: report the median of at least 9 runs
    // and the minimum (the driver's intrinsic cost).
    let samples = time_graph_samples(&compile(&ctx, g)?, repeat.max(9))?;
    let dispatch_overhead_us_min =
        samples.iter().copied().fold(f64::INFINITY, f64::min) * 1e3 / chain as f64;
    let per_dispatch: Vec<f64> = samples.iter().map(|s| s * 1e3 / chain as f64).collect();
    let dispatch_overhead_us_stats = Stats::of(&per_dispatch);
    let dispatch_overhead_us = median(samples) * 1e3 / chain as f64;
    say(format!(
        "dispatch overhead (1000 dependent tiny dispatches): {dispatch_overhead_us:.1} us each (min {dispatch_overhead_us_min:.1})"
    ));

    let mut results = Vec::new();
    let mut row = |primitive: &'static str, n: usize, stats: Stats, bytes: f64| {
        let ms = stats.median;
        let r = Row {
            primitive,
            n,
            elements_per_s: n as f64 / (ms * 1e-3),
            gbps: bytes / (ms * 1e-3) / 1e9,
            median_ms: ms,
            ms: stats,
            radix_bits: None,
            radix_items: None,
        };
        eprintln!(
            "[bench] {primitive:>15} n={n:>9}: {:>8.2} ms  {:>7.1} Melem/s  {:>5.2} GB/s",
            ms,
            r.elements_per_s / 1e6,
            r.gbps
        );
        results.push(r);
    };
    let mut radix_4m = None;
    let mut radix_shapes = Vec::new();
    for &n in &sizes {
        let keys = rand_u32(n, n as u64);
        let small: Vec<u32> = keys.iter().map(|k| k & 0xff).collect();
        let input = buf(&ctx, "in", &small)?;
        let out = ctx
            .create_buffer::<u32>("out", n, BufferUsage::STORAGE)
            .map_err(e)?;

        let scan = Scan::new(&ctx, n).map_err(e)?;
        let mut g = Graph::new("bench.scan");
        scan.record(&mut g, &input, &out, n, ScanKind::Exclusive);
        let ms = time_graph(&compile(&ctx, g)?, repeat)?;
        row("scan", n, ms, 8.0 * n as f64);

        let floats: Vec<f32> = keys.iter().map(|&k| (k as f32) * 1e-9).collect();
        let fin = buf(&ctx, "fin", &floats)?;
        let res = ctx
            .create_buffer::<ReduceResult>("res", 1, BufferUsage::STORAGE)
            .map_err(e)?;
        let red = Reduce::new(&ctx, n).map_err(e)?;
        let mut g = Graph::new("bench.reduce");
        red.record(&mut g, &fin, n, ReduceOp::Sum, &res, 0);
        let ms = time_graph(&compile(&ctx, g)?, repeat)?;
        row("reduce", n, ms, 4.0 * n as f64);
        drop((fin, res, red));

        // Compaction at 50 % density.
        let flags: Vec<u32> = keys.iter().map(|k| k & 1).collect();
        let f = buf(&ctx, "flags", &flags)?;
        let c = Compact::new(&ctx, n).map_err(e)?;
        let mut g = Graph::new("bench.compact");
        c.record(&mut g, &f, &input, &out, n);
        let ms = time_graph(&compile(&ctx, g)?, repeat)?;
        let kept = flags.iter().filter(|&&x| x != 0).count();
        row("compact", n, ms, 8.0 * n as f64 + 4.0 * kept as f64);
        drop((f, c, input, out, scan));

        let (stats, shape) = time_radix_sort(&ctx, &keys, SortKeys::U32, repeat.min(3))?;
        row("radix_sort_u32", n, stats, 16.0 * n as f64);
        radix_shapes.push(("radix_sort_u32", n, shape));
        if n == 4 << 20 {
            radix_4m = Some(n as f64 / (stats.median * 1e-3));
        }

        if n * 8 <= caps.max_storage_buffer_range as usize {
            let keys64: Vec<u64> = keys
                .iter()
                .zip(rand_u32(n, 7))
                .map(|(&a, b)| (a as u64) << 32 | b as u64)
                .collect();
            let (ms, shape) = time_radix_sort(&ctx, &keys64, SortKeys::U64, repeat.min(3))?;
            row("radix_sort_u64", n, ms, 24.0 * n as f64);
            radix_shapes.push(("radix_sort_u64", n, shape));
        }
    }

    for (primitive, n, t) in radix_shapes {
        if let Some(r) = results
            .iter_mut()
            .find(|r| r.primitive == primitive && r.n == n)
        {
            r.radix_bits = Some(t.radix_bits);
            r.radix_items = Some(t.radix_items);
        }
    }

    // Host baseline: Rust's sort_unstable_by_key on the same (key, value) pairs as the 4M sort.
    let n = 4 << 20;
    let keys = rand_u32(n, n as u64);
    let mut t = Vec::new();
    for _ in 0..3 {
        let mut pairs: Vec<(u32, u32)> = keys.iter().copied().zip(0..n as u32).collect();
        let t0 = std::time::Instant::now();
        pairs.sort_unstable_by_key(|p| p.0);
        t.push(t0.elapsed().as_secs_f64());
        std::hint::black_box(&pairs);
    }
    let cpu_sort = n as f64 / median(t);
    say(format!(
        "host sort_unstable_by_key 4M pairs: {:.1} Melem/s",
        cpu_sort / 1e6
    ));

    let report = Report {
        device: caps.name.clone(),
        driver: caps.driver.clone(),
        lavapipe_threads: std::env::var("LP_NUM_THREADS")
            .ok()
            .and_then(|v| v.parse().ok()),
        tuning,
        repeat,
        copy_gbps,
        transfer_copy_gbps,
        copy_bytes: copy_n * 4,
        copy_ms,
        transfer_copy_ms,
        dispatch_overhead_us,
        dispatch_overhead_us_min,
        dispatch_overhead_us_stats,
        cpu_sort_unstable_elements_per_s: cpu_sort,
        radix_sort_4m_elements_per_s: radix_4m,
        results,
    };
    if args.json {
        println!(
            "{}",
            serde_json::to_string(&report).map_err(|e| e.to_string())?
        );
    } else {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?
        );
    }
    Ok(())
}
