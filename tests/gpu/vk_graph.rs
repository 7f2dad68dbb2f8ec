//! Command graphs: barrier inference, independent chains, timestamps, crash markers, bounded waits.
use supple::vk::{ids, BufferUsage, CompileOptions, Dispatch, Graph, Step, TexelFormat, VkError};
use supple_gpu_tests::{assert_no_validation_errors, context, context_with_conditional_rendering};

fn increment(
    name: String,
    src: &supple::vk::GpuBuffer<u32>,
    dst: &supple::vk::GpuBuffer<u32>,
    n: u32,
) -> Dispatch {
    Dispatch::new(name, ids::TEST_INCREMENT, [n.div_ceil(64), 1, 1])
        .workgroup_size(64)
        .read(src)
        .write(dst)
        .push(&n)
}

#[test]
fn thousand_dependent_dispatches_give_the_exact_result() {
    let ctx = context(false);
    let n = 1000u32;
    let a = ctx
        .upload_buffer("a", &vec![0u32; n as usize], BufferUsage::STORAGE)
        .unwrap();
    let b = ctx
        .create_buffer::<u32>("b", n as usize, BufferUsage::STORAGE)
        .unwrap();
    let mut g = Graph::new("chain");
    for i in 0..1000 {
        let (s, d) = if i % 2 == 0 { (&a, &b) } else { (&b, &a) };
        g.dispatch(increment(format!("inc{i}"), s, d, n));
    }
    let c = g
        .compile(
            &ctx,
            CompileOptions {
                timestamps: true,
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(
        c.barrier_count(),
        999,
        "every step depends on the previous one"
    );
    c.run().unwrap();
    assert!(a.read().unwrap().iter().all(|&v| v == 1000));
    // Reusable: a second run continues from the result.
    c.run().unwrap();
    assert!(a.read().unwrap().iter().all(|&v| v == 2000));
    let p = c.profile().unwrap().expect("timestamps supported");
    assert_eq!(p.nodes.len(), 1000);
    assert!(p
        .nodes
        .iter()
        .all(|t| t.gpu_ms >= 0.0 && t.kernel == "test/increment"));
    assert!(p.total_ms > 0.0);
    drop(c);
    assert_no_validation_errors(&ctx);
}

#[test]
fn independent_chains_get_no_barrier_between_them() {
    let ctx = context(false);
    let n = 256u32;
    let bufs: Vec<_> = (0..4)
        .map(|i| {
            ctx.upload_buffer(
                &format!("buf{i}"),
                &vec![0u32; n as usize],
                BufferUsage::STORAGE,
            )
            .unwrap()
        })
        .collect();
    let mut g = Graph::new("two-chains");
    // Chain A: 0 -> 1 -> 0 -> 1 ; chain B: 2 -> 3 -> 2 -> 3, recorded one after the other.
    for i in 0..4 {
        let (s, d) = if i % 2 == 0 { (0, 1) } else { (1, 0) };
        g.dispatch(increment(format!("A{i}"), &bufs[s], &bufs[d], n));
    }
    for i in 0..4 {
        let (s, d) = if i % 2 == 0 { (2, 3) } else { (3, 2) };
        g.dispatch(increment(format!("B{i}"), &bufs[s], &bufs[d], n));
    }
    let c = g.compile(&ctx, CompileOptions::default()).unwrap();
    // No dependency crosses chains.
    for (i, deps) in c.dependencies().iter().enumerate() {
        for &d in deps {
            assert_eq!(i < 4, d < 4, "node {i} depends on {d} across chains");
        }
    }
    // Levels interleave the chains: A_k and B_k share a level, so 3 barriers, not 7.
    assert_eq!(c.barrier_count(), 3, "{}", c.to_text());
    let sched = c.schedule();
    let pos = |i: usize| sched.iter().position(|s| *s == Step::Node(i)).unwrap();
    for k in 0..4 {
        let (a, b) = (pos(k), pos(4 + k));
        let between = &sched[a.min(b)..a.max(b)];
        assert!(
            !between.iter().any(|s| matches!(s, Step::Barrier(_))),
            "barrier between A{k} and B{k}"
        );
    }
    c.run().unwrap();
    assert!(bufs[0].read().unwrap().iter().all(|&v| v == 4));
    assert!(bufs[2].read().unwrap().iter().all(|&v| v == 4));
    let dot = c.to_dot();
    assert!(
        dot.contains("n0 -> n1") && !dot.contains("n3 -> n4"),
        "{dot}"
    );
    drop(c);
    assert_no_validation_errors(&ctx);
}

#[test]
fn fills_and_copies_are_ordered_with_dispatches() {
    let ctx = context(true);
    let a = ctx
        .create_buffer::<u32>("a", 100, BufferUsage::STORAGE)
        .unwrap();
    let b = ctx
        .create_buffer::<u32>("b", 100, BufferUsage::STORAGE)
        .unwrap();
    let c_buf = ctx
        .create_buffer::<u32>("c", 100, BufferUsage::STORAGE)
        .unwrap();
    let mut g = Graph::new("fill-copy");
    g.fill("clear", &a, 41);
    g.dispatch(increment("inc".into(), &a, &b, 100));
    g.copy("copy", &b, &c_buf);
    let c = g.compile(&ctx, CompileOptions::default()).unwrap();
    assert_eq!(c.barrier_count(), 2);
    c.run().unwrap();
    assert!(c_buf.read().unwrap().iter().all(|&v| v == 42));
    drop(c);
    assert_no_validation_errors(&ctx);
}

#[test]
fn a_hung_kernel_times_out_and_names_the_last_completed_node() {
    let ctx = context(false);
    let v = ctx
        .upload_buffer("spin", &[1u32, 0, 0, 0], BufferUsage::STORAGE)
        .unwrap();
    let mut g = Graph::new("hang");
    g.fill("before", v.slice(2..3), 7);
    // 20k workgroups x 8 invocations x 50k volatile loads: seconds of work on lavapipe, far
    // beyond the 100 ms bound below (llvmpipe caps loops at 65535 iterations, so the work is
    // spread over workgroups).
    g.dispatch(
        Dispatch::new("spin", ids::TEST_SPIN, [20_000, 1, 1])
            .workgroup_size(8)
            .read_write(&v)
            .push(&1u32),
    );
    let c = g
        .compile(
            &ctx,
            CompileOptions {
                crash_markers: true,
                ..Default::default()
            },
        )
        .unwrap();
    let t = c.submit().unwrap();
    match c.wait_timeout(t, std::time::Duration::from_millis(100)) {
        Err(VkError::Timeout { last_node, .. }) => {
            let last = last_node.expect("crash markers name a node");
            assert!(last.contains("before"), "{last}");
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    // The kernel is bounded, so it does finish; the graph then tears down cleanly.
    c.wait_timeout(t, std::time::Duration::from_secs(300))
        .unwrap();
    assert!(c.last_completed_node().unwrap().contains("spin"));
    drop(c);
    assert_no_validation_errors(&ctx);
}

#[test]
fn invalid_api_use_is_reported_by_the_validation_layer() {
    let ctx = context(false);
    let d = ctx.raw_device();
    // Size 0 violates VUID-VkBufferCreateInfo-size-00912.
    let info = supple::vk::ash::vk::BufferCreateInfo::default()
        .size(0)
        .usage(supple::vk::ash::vk::BufferUsageFlags::STORAGE_BUFFER);
    // SAFETY: deliberately invalid create info for this test; the buffer (if any) is destroyed.
    unsafe {
        if let Ok(b) = d.create_buffer(&info, None) {
            d.destroy_buffer(b, None);
        }
    }
    let errors = ctx.validation_errors();
    assert!(
        errors.iter().any(|m| m.text.contains("00912")),
        "expected VUID-VkBufferCreateInfo-size-00912, got {errors:?}"
    );
    ctx.take_validation_messages();
}

#[test]
fn graph_errors_are_reported_not_panicked() {
    let ctx = context(false);
    let a = ctx
        .create_buffer::<u32>("a", 64, BufferUsage::STORAGE)
        .unwrap();
    let mut g = Graph::new("bad");
    g.dispatch(
        Dispatch::new("too-much-push", ids::TEST_INCREMENT, [1, 1, 1])
            .read(&a)
            .write(&a)
            .push(&[[0u32; 20]; 2]),
    );
    let e = g
        .compile(&ctx, CompileOptions::default())
        .err()
        .expect("compile must fail")
        .to_string();
    assert!(
        e.contains("too-much-push") && e.contains("push-constant"),
        "{e}"
    );
    assert_no_validation_errors(&ctx);
}

#[test]
fn disjoint_ranges_of_one_buffer_are_independent() {
    let ctx = context(false);
    let src = ctx
        .upload_buffer("src", &vec![1u32; 128], BufferUsage::STORAGE)
        .unwrap();
    let dst = ctx
        .create_buffer::<u32>("dst", 128, BufferUsage::STORAGE)
        .unwrap();
    let out = ctx
        .create_buffer::<u32>("out", 64, BufferUsage::STORAGE)
        .unwrap();
    let inc = |name: &str, s: supple::vk::BufferSlice, d: supple::vk::BufferSlice| {
        Dispatch::new(name, ids::TEST_INCREMENT, [1, 1, 1])
            .workgroup_size(64)
            .read(s)
            .write(d)
            .push(&64u32)
    };
    let mut g = Graph::new("halves");
    g.dispatch(inc("low", src.slice(0..64), dst.slice(0..64)));
    g.dispatch(inc("high", src.slice(64..128), dst.slice(64..128)));
    g.dispatch(inc("read-high", dst.slice(64..128), out.slice(0..64)));
    let c = g.compile(&ctx, CompileOptions::default()).unwrap();
    assert!(
        c.dependencies()[1].is_empty(),
        "writes to disjoint halves do not depend on each other"
    );
    assert_eq!(
        c.dependencies()[2],
        vec![1],
        "reading the high half waits only for its writer"
    );
    assert_eq!(c.barrier_count(), 1, "{}", c.to_text());
    c.run().unwrap();
    assert_eq!(dst.read().unwrap(), vec![2u32; 128]);
    assert_eq!(out.read().unwrap(), vec![3u32; 64]);
    drop(c);
    assert_no_validation_errors(&ctx);
}

/// On random graphs of overlapping slices (reads, writes, fills), the compiled levels are those
/// of the full pairwise conflict relation: the compiler tracks only live accesses per buffer
/// (a write covering an earlier access shadows it) and must lose no ordering doing so.
#[test]
fn levels_match_the_full_conflict_relation_on_random_graphs() {
    use rand::Rng;
    let ctx = context(false);
    let mut r = supple_gpu_tests::rng(17);
    let bufs: Vec<_> = (0..3)
        .map(|k| {
            ctx.create_buffer::<u32>(&format!("b{k}"), 256, BufferUsage::STORAGE)
                .unwrap()
        })
        .collect();
    for round in 0..4 {
        // (buffer, first, last) in elements, multiples of 16 (64 bytes).
        let slice = |r: &mut rand_pcg::Pcg64| {
            let b = r.random_range(0..bufs.len());
            let lo = r.random_range(0..16usize) * 16;
            let hi = r.random_range(lo / 16 + 1..=16usize) * 16;
            (b, lo, hi)
        };
        let mut g = Graph::new("random");
        // Per node: (slice, writes) of each use.
        let mut uses: Vec<Vec<((usize, usize, usize), bool)>> = Vec::new();
        for i in 0..300 {
            if r.random_range(0..8) == 0 {
                let d = slice(&mut r);
                g.fill(format!("fill{i}"), bufs[d.0].slice(d.1..d.2), 0);
                uses.push(vec![(d, true)]);
            } else {
                let (s, d) = (slice(&mut r), slice(&mut r));
                let n = (s.2 - s.1).min(d.2 - d.1) as u32;
                g.dispatch(
                    Dispatch::new(format!("inc{i}"), ids::TEST_INCREMENT, [1, 1, 1])
                        .workgroup_size(64)
                        .read(bufs[s.0].slice(s.1..s.2))
                        .write(bufs[d.0].slice(d.1..d.2))
                        .push(&n),
                );
                uses.push(vec![(s, false), (d, true)]);
            }
        }
        let c = g.compile(&ctx, CompileOptions::default()).unwrap();
        let mut got = vec![0usize; uses.len()];
        let mut level = 0;
        for step in c.schedule() {
            match step {
                Step::Barrier(_) => level += 1,
                Step::Node(i) => got[*i] = level,
            }
        }
        let overlap = |a: (usize, usize, usize), b: (usize, usize, usize)| {
            a.0 == b.0 && a.1 < b.2 && b.1 < a.2
        };
        let mut want = vec![0usize; uses.len()];
        for i in 0..uses.len() {
            for j in 0..i {
                let conflict = uses[i]
                    .iter()
                    .any(|&(a, wa)| uses[j].iter().any(|&(b, wb)| overlap(a, b) && (wa || wb)));
                if conflict {
                    want[i] = want[i].max(want[j] + 1);
                }
            }
        }
        assert_eq!(got, want, "round {round}:\n{}", c.to_text());
    }
    assert_no_validation_errors(&ctx);
}

/// A dispatch that writes a buffer it declared as read-only leaves the next reader without a
/// barrier: the validation layer's synchronization validation reports the hazard (proves it is on
/// in the tests, so a wrong barrier inference cannot pass on lavapipe, which runs dispatches in
/// order anyway).
#[test]
fn a_missing_barrier_is_reported_by_synchronization_validation() {
    let ctx = context(false);
    let a = ctx
        .upload_buffer("a", &vec![0u32; 64], BufferUsage::STORAGE)
        .unwrap();
    let b = ctx
        .create_buffer::<u32>("b", 64, BufferUsage::STORAGE)
        .unwrap();
    let c = ctx
        .create_buffer::<u32>("c", 64, BufferUsage::STORAGE)
        .unwrap();
    let mut g = Graph::new("undeclared-write");
    // TEST_INCREMENT writes its second binding; declaring it read hides the write.
    g.dispatch(
        Dispatch::new("writes-b-undeclared", ids::TEST_INCREMENT, [1, 1, 1])
            .workgroup_size(64)
            .read(&a)
            .read(&b)
            .push(&64u32),
    );
    g.dispatch(increment("reads-b".into(), &b, &c, 64));
    let compiled = g.compile(&ctx, CompileOptions::default()).unwrap();
    assert_eq!(compiled.barrier_count(), 0, "{}", compiled.to_text());
    compiled.run().unwrap();
    drop(compiled);
    let errors = ctx.validation_errors();
    assert!(
        errors.iter().any(|m| m.text.contains("SYNC-HAZARD")),
        "expected a SYNC-HAZARD report, got {errors:?}"
    );
    ctx.take_validation_messages();
}

/// A gated section runs exactly when its condition word holds when the section is reached —
/// including a word changed earlier in the same submission — and its fill and copy (rewritten
/// as dispatches) match the references; indirect dispatches inside keep their own arguments.
/// The same results with conditional rendering (closed sections skipped: the skipped
/// dispatches are counted) and without (closed sections launch empty indirect dispatches),
/// with per-node timestamps that stay valid around skipped nodes.
#[test]
fn gated_sections_run_only_while_their_condition_word_holds() {
    for conditional in [true, false] {
        gated_sections_with(conditional);
    }
}

fn gated_sections_with(conditional: bool) {
    use supple::cpu_reference::gate::{copy_u32, fill_u32, gate_args};
    use supple::vk::GatedGraph;
    let ctx = context_with_conditional_rendering(false, conditional);
    let has = ctx.caps().conditional_rendering;
    if ctx.caps().name.contains("llvmpipe") {
        assert!(has, "lavapipe has VK_EXT_conditional_rendering");
    }
    assert_eq!(ctx.conditional_rendering(), conditional && has);
    let skipping = ctx.conditional_rendering();
    let n = 100u32;
    let rw = BufferUsage::STORAGE | BufferUsage::HOST_READ;
    let flags = ctx
        .create_buffer::<u32>("flags", 4, rw | BufferUsage::HOST_WRITE)
        .unwrap();
    let a = ctx.upload_buffer("a", &vec![5u32; n as usize], rw).unwrap();
    let b = ctx.upload_buffer("b", &vec![0u32; n as usize], rw).unwrap();
    let c = ctx.upload_buffer("c", &vec![0u32; n as usize], rw).unwrap();
    let mut gg = GatedGraph::new("gated");
    // Section 1 (word 0, bit 1): b = a + 1, then c = b (a copy) and a[..] = 9 (a fill).
    let mut s1 = Graph::new("s1");
    s1.dispatch(increment("inc".into(), &a, &b, n));
    s1.copy("copy_b_c", &b, &c);
    s1.fill("fill_a", &a, 9);
    gg.gated(s1, &flags, 0, 1);
    // Always: flags[0..3] += 1, so section 2 sees the word as changed in this submission.
    let mut always = Graph::new("always");
    always.dispatch(increment("flags_next".into(), &flags.clone(), &flags, 3));
    gg.always(always);
    // Section 2 (word 2, bit 4): c = c + 1.
    let mut s2 = Graph::new("s2");
    s2.dispatch(increment("inc_c".into(), &c, &c.clone(), n));
    gg.gated(s2, &flags, 2, 4);
    // Per-node timestamps: nodes inside a skipped section still get both of theirs.
    let options = CompileOptions {
        timestamps: true,
        graph_timestamps: true,
        crash_markers: false,
    };
    let g = gg.build(&ctx).unwrap().compile(&ctx, options).unwrap();
    let text = g.to_text();
    assert!(text.contains("dispatch-indirect"));
    // The four section dispatches (inc, copy, fill; inc_c) are predicated, not the gates.
    assert_eq!(g.conditional_dispatch_count(), if skipping { 4 } else { 0 });
    assert_eq!(text.contains(" if '"), skipping, "{text}");
    if skipping {
        // The barrier from a gate's write to the predicate's read, inferred like any other.
        assert!(text.contains("CONDITIONAL_RENDERING"), "{text}");
    }
    for (f0, f2) in [(0u32, 0u32), (1, 3), (3, 4), (2, 2)] {
        a.write(&vec![5; n as usize]).unwrap();
        b.write(&vec![0; n as usize]).unwrap();
        c.write(&vec![0; n as usize]).unwrap();
        flags.write(&[f0, 0, f2, 0]).unwrap();
        let before = ctx.counters();
        g.run().unwrap();
        let skipped = if skipping {
            g.count_skipped_dispatches().unwrap()
        } else {
            0
        };
        let d = ctx.counters() - before;
        // The reference: the same sections, applied on the host.
        let (mut ra, mut rb, mut rc) = (
            vec![5u32; n as usize],
            vec![0u32; n as usize],
            vec![0u32; n as usize],
        );
        let open1 = gate_args(&[f0, 0, f2, 0], 0, 1, &[[2, 1, 1, 0]])[0][0] != 0;
        let open2 = gate_args(&[f0 + 1, 1, f2 + 1, 0], 2, 4, &[[2, 1, 1, 0]])[0][0] != 0;
        assert_eq!(open1, f0 & 1 != 0);
        if open1 {
            rb.iter_mut().zip(&ra).for_each(|(b, a)| *b = a + 1);
            copy_u32(&rb, &mut rc, n as usize);
            fill_u32(&mut ra, n as usize, 9);
        }
        if open2 {
            rc.iter_mut().for_each(|c| *c += 1);
        }
        let what = format!("conditional rendering {skipping}, flags {f0} {f2}");
        assert_eq!(a.read().unwrap(), ra, "{what}");
        assert_eq!(b.read().unwrap(), rb, "{what}");
        assert_eq!(c.read().unwrap(), rc, "{what}");
        // Recorded: 2 gates, 4 section dispatches and the always one; skipped: the closed
        // sections' dispatches.
        let expect_skipped = if skipping {
            3 * (!open1) as u64 + (!open2) as u64
        } else {
            0
        };
        assert_eq!(skipped, expect_skipped, "{what}");
        assert_eq!(d.dispatches, 7, "{what}");
        assert_eq!(d.dispatches_skipped, expect_skipped, "{what}");
        assert_eq!(d.dispatches_executed(), 7 - expect_skipped, "{what}");
        let profile = g.profile().unwrap().expect("compiled with timestamps");
        assert_eq!(profile.nodes.len(), 7, "{what}");
        for node in &profile.nodes {
            assert!(
                node.gpu_ms.is_finite() && node.gpu_ms >= 0.0 && node.gpu_ms <= profile.total_ms,
                "{what}: node {} took {} ms of {}",
                node.name,
                node.gpu_ms,
                profile.total_ms
            );
        }
    }
    drop(g);
    if !skipping {
        // A predicated dispatch needs a context with conditional rendering.
        let mut p = Graph::new("predicated");
        p.dispatch(increment("inc".into(), &a, &b, n).only_if(&flags));
        let e = p.compile(&ctx, CompileOptions::default()).err();
        assert!(
            matches!(&e, Some(VkError::Graph { message, .. }) if message.contains("conditional rendering")),
            "{:?}",
            e.map(|e| e.to_string())
        );
    }
    assert_no_validation_errors(&ctx);
}

/// A whole gated graph skipped while its word fails (`GatedGraph::skip_unless`, conditional
/// rendering only), its unconditional part running anyway, and a section opened by the
/// previous section's gate (`gated_like_previous`: one gate fewer). The same results with and
/// without conditional rendering (without it nothing is skipped: the graph's parts that always
/// run do run); the skipped dispatches are counted.
#[test]
fn a_gated_graph_is_skipped_whole_while_its_word_fails() {
    use supple::vk::GatedGraph;
    for conditional in [true, false] {
        let ctx = context_with_conditional_rendering(false, conditional);
        let skipping = ctx.conditional_rendering();
        let n = 70u32;
        let rw = BufferUsage::STORAGE | BufferUsage::HOST_READ | BufferUsage::HOST_WRITE;
        let buf = |name: &str| ctx.create_buffer::<u32>(name, n as usize, rw).unwrap();
        let flags = ctx.create_buffer::<u32>("flags", 4, rw).unwrap();
        let (a, b, c, u, v) = (buf("a"), buf("b"), buf("c"), buf("u"), buf("v"));
        let mut gg = GatedGraph::new("whole");
        gg.skip_unless(&flags, 0, 1);
        // Section A (word 1, bit 2): b = a + 1.
        let mut sa = Graph::new("a");
        sa.dispatch(increment("inc_b".into(), &a, &b, n));
        gg.gated(sa, &flags, 1, 2);
        // Unconditional: v = u + 1, even when the graph is skipped.
        let mut un = Graph::new("u");
        un.dispatch(increment("inc_v".into(), &u, &v, n));
        gg.unconditional(un);
        // Section B, under A's gate: c = b + 1.
        let mut sb = Graph::new("b");
        sb.dispatch(increment("inc_c".into(), &b, &c, n));
        gg.gated_like_previous(sb);
        // Always (while the graph runs): u = a + 1.
        let mut al = Graph::new("always");
        al.dispatch(increment("inc_u".into(), &a, &u, n));
        gg.always(al);
        let g = gg
            .build(&ctx)
            .unwrap()
            .compile(&ctx, Default::default())
            .unwrap();
        // Gates: the graph's (with conditional rendering) and A's, none for B.
        let recorded = 4 + 1 + skipping as u64;
        assert_eq!(g.dispatch_count() as u64, recorded);
        for (f0, f1) in [(0u32, 2u32), (1, 0), (1, 2), (2, 2)] {
            for x in [&a, &b, &c, &u, &v] {
                x.write(&vec![10; n as usize]).unwrap();
            }
            flags.write(&[f0, f1, 0, 0]).unwrap();
            let before = ctx.counters();
            g.run().unwrap();
            if skipping {
                g.count_skipped_dispatches().unwrap();
            }
            let d = ctx.counters() - before;
            let open = f0 & 1 != 0;
            let what = format!("conditional rendering {skipping}, flags {f0} {f1}");
            // Without skipping the graph runs whatever its word says.
            let always = open || !skipping;
            let sections = always && f1 & 2 != 0;
            let k = |ran: bool, v: u32| vec![if ran { v } else { 10 }; n as usize];
            assert_eq!(b.read().unwrap(), k(sections, 11), "{what}");
            assert_eq!(c.read().unwrap(), k(sections, 12), "{what}");
            assert_eq!(u.read().unwrap(), k(always, 11), "{what}");
            assert_eq!(v.read().unwrap(), k(true, 11), "{what}");
            let skipped = if !skipping {
                0
            } else if !open {
                // A's gate, A, B and the always part; the graph's gate and the
                // unconditional part run.
                4
            } else {
                2 * (!sections) as u64
            };
            assert_eq!(d.dispatches, recorded, "{what}");
            assert_eq!(d.dispatches_skipped, skipped, "{what}");
        }
        drop(g);
        assert_no_validation_errors(&ctx);
    }
}

fn increment_texels(
    name: String,
    src: impl Into<supple::vk::BufferSlice>,
    dst: impl Into<supple::vk::BufferSlice>,
    n: u32,
) -> Dispatch {
    Dispatch::new(name, ids::TEST_INCREMENT_TEXELS, [n.div_ceil(64), 1, 1])
        .workgroup_size(64)
        .read_texels(src, TexelFormat::R32Uint)
        .write(dst)
        .push(&n)
}

/// Reads through uniform texel buffer views (`Dispatch::read_texels`) see the storage writes
/// before them: a chain that alternates texel reads of one buffer with storage writes of the
/// other, over a range at an offset, gives the exact count under synchronization validation.
#[test]
fn texel_reads_are_ordered_after_storage_writes() {
    let ctx = context(false);
    let n = 1000u32;
    let usage = BufferUsage::STORAGE | BufferUsage::TEXEL;
    // 16 u32 of padding in front: the views start at byte 64 (minTexelBufferOffsetAlignment
    // is at most 256 by the spec; 16 on lavapipe).
    let pad = 64usize;
    let a = ctx
        .upload_buffer("a", &vec![0u32; pad + n as usize], usage)
        .unwrap();
    let b = ctx
        .create_buffer::<u32>("b", pad + n as usize, usage)
        .unwrap();
    let range = pad..pad + n as usize;
    let mut g = Graph::new("texel-chain");
    for i in 0..100 {
        let (s, d) = if i % 2 == 0 { (&a, &b) } else { (&b, &a) };
        g.dispatch(increment_texels(
            format!("inc{i}"),
            s.slice(range.clone()),
            d.slice(range.clone()),
            n,
        ));
    }
    let c = g.compile(&ctx, CompileOptions::default()).unwrap();
    assert_eq!(
        c.barrier_count(),
        99,
        "every step depends on the previous one"
    );
    assert_eq!(
        c.texel_view_count(),
        2,
        "one view per buffer range, shared by 50 dispatches each"
    );
    c.run().unwrap();
    let out = a.read().unwrap();
    assert!(
        out[pad..].iter().all(|&v| v == 100),
        "{:?}",
        &out[pad..pad + 4]
    );
    assert!(
        out[..pad].iter().all(|&v| v == 0),
        "the padding is not written"
    );
    drop(c);
    assert_no_validation_errors(&ctx);
}

/// A texel binding of a buffer created without `BufferUsage::TEXEL`, or at an offset the
/// device cannot view, is a compile error naming the node and the buffer, not a driver fault.
#[test]
fn bad_texel_bindings_are_refused_at_compile_time() {
    let ctx = context(false);
    let plain = ctx
        .create_buffer::<u32>("plain", 256, BufferUsage::STORAGE)
        .unwrap();
    let texel = ctx
        .create_buffer::<u32>("viewable", 256, BufferUsage::STORAGE | BufferUsage::TEXEL)
        .unwrap();
    let compile = |d: Dispatch| {
        let mut g = Graph::new("bad-texels");
        g.dispatch(d);
        g.compile(&ctx, CompileOptions::default())
            .err()
            .expect("compile must fail")
            .to_string()
    };
    let e = compile(increment_texels("no-usage".into(), &plain, &texel, 16));
    assert!(
        e.contains("no-usage") && e.contains("'plain'") && e.contains("BufferUsage::TEXEL"),
        "{e}"
    );
    let e = compile(
        Dispatch::new("too-small", ids::TEST_INCREMENT_TEXELS, [1, 1, 1])
            .read_texels(texel.slice(0..1), TexelFormat::Rgba32Float)
            .write(&plain)
            .push(&1u32),
    );
    assert!(
        e.contains("too-small") && e.contains("less than one texel"),
        "{e}"
    );
    // One u32 in: 4 bytes, below lavapipe's (and most GPUs') minTexelBufferOffsetAlignment of
    // 16 (on a device that views any u32 offset there is no misaligned u32 range to try).
    let align = ctx.caps().min_texel_offset_alignment;
    if align > 4 {
        let e = compile(increment_texels(
            "misaligned".into(),
            texel.slice(1..17),
            &plain,
            16,
        ));
        assert!(
            e.contains("misaligned") && e.contains("minTexelBufferOffsetAlignment"),
            "{e}"
        );
    }
    assert_no_validation_errors(&ctx);
}
