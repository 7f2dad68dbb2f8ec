//! Recording of the two-way solver's pair-sized workspace: the buffers sized by the proximity
//! pair capacities and the graphs that bind them (the constraint build, the per-color indirect
//! arguments, the step batch, and the step batch with searches queued within it).

use super::*;

/// Buffers sized by the proximity pair capacities.
pub(super) struct PairBuffers {
    pub(super) capacity: [u32; 2],
    /// The per-binding limit the split buffers were allocated for (bytes).
    pub(super) binding_limit: u64,
    /// Contact constraints (four vertices each) in canonical order.
    pub(super) cons: SplitBuffer<[u32; 4]>,
    keys: GpuBuffer<[u32; 2]>,
    vals: GpuBuffer<u32>,
    sort: RadixSort,
    pub(super) lambda: GpuBuffer<f32>,
    /// Floor release: separating direction and distance of every pair at x^(l).
    pub(super) closest: SplitBuffer<[f32; 4]>,
    /// Floor release: the floor pairs of the current step.
    pub(super) floor_list: GpuBuffer<u32>,
    pub(super) coloring: GpuColoring,
}

/// The pair buffers and the graphs that bind them.
pub(super) struct PairWorkspace {
    pub(super) bufs: PairBuffers,
    /// The search workspace generation the graphs were recorded for (its pair buffers).
    pub(super) search_generation: u64,
    /// Changes whenever this workspace is recorded again (new buffers or color capacity).
    pub(super) serial: u64,
    pub(super) build: CompiledGraph,
    pub(super) color_cap: u32,
    pub(super) batch: CompiledGraph,
    /// Steps with a proximity search, its build and its coloring queued after every
    /// [`BATCH_SEARCH_STEPS`] of them ([`TwoWay::set_batch_searches`]); `None` when off or
    /// not possible (per-color sweeps, constraints split over two bindings).
    pub(super) search_batch: Option<CompiledGraph>,
}

/// Steps before each search section of a step batch ([`TwoWay::set_batch_searches`]): while
/// cloth hits the sphere in `cloth_sphere_64`, a step uses up the reuse bound every one or two
/// steps (docs/measurements.md).
pub(super) const BATCH_SEARCH_STEPS: u32 = 2;

/// Bits of the pair sort key for a mesh: `(b_bits, key_bits)`.
fn sort_key_bits(mesh: &ProximityMesh) -> Result<(u32, u32), String> {
    let bits = |n: usize| (usize::BITS - n.leading_zeros()).max(1);
    let b_bits = bits(mesh.triangles.len().max(mesh.edges.len()));
    let a_bits = bits(mesh.num_vertices.max(mesh.edges.len()));
    let key_bits = 1 + a_bits + b_bits;
    if b_bits > 31 || key_bits > 64 {
        return Err(format!(
            "mesh too large for pair sort keys ({key_bits} bits)"
        ));
    }
    Ok((b_bits, key_bits))
}

impl TwoWay {
    /// (Re)allocates the pair-sized buffers for the search's current capacities and records
    /// the build and batch graphs for `color_cap` contact colors.
    pub(super) fn workspace(&mut self, color_cap: u32) -> Result<(), String> {
        // A search submitted for the old workspace is not used.
        self.drop_prefetched()?;
        let b = self.pair_buffers()?;
        let ctx = &self.ctx;
        let opts = if self.settings.profile {
            CompileOptions::profiled()
        } else {
            CompileOptions {
                graph_timestamps: true,
                ..Default::default()
            }
        };
        let (b_bits, key_bits) = sort_key_bits(self.search.mesh())?;
        let mut g = Graph::new("two_way.build");
        self.record_build(&mut g, &b, b_bits, key_bits);
        let build = g.compile(ctx, CompileOptions::default()).map_err(err)?;
        let mut g = Graph::new("two_way.color_args");
        self.build_node(
            &mut g,
            &b,
            b_bits,
            key_bits,
            1,
            "two_way.color_args",
            groups(MAX_COLORS as usize),
        );
        self.args = Some(g.compile(ctx, CompileOptions::default()).map_err(err)?);
        let mut g = Graph::new("two_way.batch");
        for step in 0..self.settings.steps_per_batch {
            self.record_step(&mut g, &b, step, color_cap);
        }
        let batch = g.compile(ctx, opts).map_err(err)?;
        let search_batch = if self.batch_searches > 0 && self.fused && !b.cons.is_split() {
            let g = self.record_search_batch(&b, b_bits, key_bits, color_cap)?;
            Some(g.compile(ctx, opts).map_err(err)?)
        } else {
            None
        };
        self.ws_serial += 1;
        self.ws = Some(PairWorkspace {
            bufs: b,
            search_generation: self.search.generation(),
            serial: self.ws_serial,
            build,
            color_cap,
            batch,
            search_batch,
        });
        Ok(())
    }

    /// The pair buffers of the current workspace when its capacities and binding limit still
    /// hold, new ones otherwise (the old ones dropped first: they may be large).
    fn pair_buffers(&mut self) -> Result<PairBuffers, String> {
        let ctx = &self.ctx;
        let p = self.search.params();
        let capacity = [p.vt_cap, p.ee_cap];
        let total = (p.vt_cap + p.ee_cap) as usize;
        let limit = self.binding_limit;
        match self.ws.take() {
            Some(w) if w.bufs.capacity == capacity && w.bufs.binding_limit == limit => {
                return Ok(w.bufs)
            }
            old => drop(old),
        }
        // Only floor release reads the pairs' separating directions.
        let release = self.settings.floor_release.is_some();
        let closest_len = if release { total } else { 1 };
        let storage = BufferUsage::STORAGE;
        check_workspace_sizes(total, release, limit, ctx.caps().max_storage_buffer_range)?;
        let mut coloring = GpuColoring::new(ctx, total, self.n).map_err(err)?;
        // Contact graphs need tens to hundreds of colors: fewer host checks.
        coloring.set_rounds_per_run(32);
        Ok(PairBuffers {
            capacity,
            binding_limit: limit,
            cons: SplitBuffer::new(ctx, "two_way.constraints", total, limit)?,
            keys: ctx
                .create_buffer("two_way.sort_keys", total, storage)
                .map_err(err)?,
            vals: ctx
                .create_buffer("two_way.sort_values", total, storage)
                .map_err(err)?,
            sort: RadixSort::new(ctx, total, SortKeys::U64).map_err(err)?,
            lambda: ctx
                .create_buffer("two_way.lambda", total, storage)
                .map_err(err)?,
            closest: SplitBuffer::new(ctx, "two_way.pair_closest", closest_len, limit)?,
            floor_list: ctx
                .create_buffer("two_way.floor_list", total.max(1), storage)
                .map_err(err)?,
            coloring,
        })
    }

    /// One `two_way_build.comp` dispatch in `mode` (0: sort keys and counts, 1: per-color
    /// indirect arguments, 2: gather after the sort).
    #[allow(clippy::too_many_arguments)]
    fn build_node(
        &self,
        g: &mut Graph,
        b: &PairBuffers,
        b_bits: u32,
        key_bits: u32,
        mode: u32,
        name: &str,
        grid: [u32; 3],
    ) {
        let push = [b.capacity[0], b.capacity[1], MAX_COLORS, b_bits, key_bits];
        g.dispatch(
            Dispatch::new(name, ids::COLLISION_TWO_WAY_BUILD, grid)
                .workgroup_size(WG)
                .spec(&[mode])
                .read(self.search.status())
                .read(self.search.pairs_vt())
                .read(self.search.pairs_ee())
                .read(self.search.triangles())
                .read(self.search.edges())
                .read_write(b.cons.lo())
                .read_write(&self.meta)
                .read(b.coloring.offsets())
                .write(&self.color_args)
                .read_write(&b.keys)
                .read_write(&b.vals)
                .read_write(b.cons.hi())
                .push(&push),
        );
    }

    /// Records the build: pairs → constraints in canonical (sorted) order, multipliers reset.
    fn record_build(&self, g: &mut Graph, b: &PairBuffers, b_bits: u32, key_bits: u32) {
        let total = (b.capacity[0] + b.capacity[1]) as usize;
        self.build_node(g, b, b_bits, key_bits, 0, "two_way.build", groups(total));
        b.sort.record(g, &b.keys, &b.vals, total, key_bits);
        self.build_node(g, b, b_bits, key_bits, 2, "two_way.gather", groups(total));
        g.fill("two_way.reset_lambda", &b.lambda, 0);
    }

    /// The step batch with searches within it: `batch_searches` units of
    /// [`BATCH_SEARCH_STEPS`] steps, each followed by a section gated on the state's search
    /// flag ([`GatedGraph`]) that searches at x ([`TwoWay::record_queued_search`]). A step that
    /// uses up the reuse bound sets the flag and stops the steps; the next section opens,
    /// searches and clears it, and the steps go on. Closed sections launch nothing (skipped
    /// under conditional rendering, zero workgroups otherwise).
    fn record_search_batch(
        &self,
        b: &PairBuffers,
        b_bits: u32,
        key_bits: u32,
        color_cap: u32,
    ) -> Result<Graph, String> {
        // The flags word of `TwState` (bound, max_disp, max_r, steps, flags).
        const FLAGS_WORD: u32 = 4;
        let mut gg = GatedGraph::new("two_way.search_batch");
        for unit in 0..self.batch_searches {
            let mut steps = Graph::new(format!("two_way.steps[{unit}]"));
            for s in 0..BATCH_SEARCH_STEPS {
                self.record_step(&mut steps, b, unit * BATCH_SEARCH_STEPS + s, color_cap);
            }
            self.search.record_clear_indirect_args(&mut steps);
            gg.always(steps);
            let mut search = Graph::new(format!("two_way.search[{unit}]"));
            self.record_queued_search(&mut search, b, b_bits, key_bits, unit);
            gg.gated(search, &self.state, FLAGS_WORD, FLAG_SEARCH);
        }
        gg.build(&self.ctx).map_err(err)
    }

    /// Records a proximity search at x, its constraint build, the coloring of its constraints
    /// in one workgroup (`jp_workgroup.comp`) and `two_way_accept.comp`, which hands the new
    /// pairs to the steps that follow (or, when the search overflowed its buffers, stops
    /// them for the host to search again). `unit` seeds the coloring.
    fn record_queued_search(
        &self,
        g: &mut Graph,
        b: &PairBuffers,
        b_bits: u32,
        key_bits: u32,
        unit: u32,
    ) {
        let total = (b.capacity[0] + b.capacity[1]) as usize;
        self.search.record_search(g);
        self.record_build(g, b, b_bits, key_bits);
        let seed = 0x9e37_79b9u32.wrapping_mul(unit + 1);
        b.coloring.record_workgroup(
            g,
            &format!("two_way.color[{unit}]"),
            b.cons.lo(),
            &self.meta,
            1,
            total,
            self.n,
            seed,
        );
        let p = self.search.params();
        let push = [
            (self.settings.d_max as f32).to_bits(),
            p.entry_cap,
            p.vt_cap,
            p.ee_cap,
            p.cvt_cap,
            p.cee_cap,
        ];
        g.dispatch(
            Dispatch::new(
                format!("two_way.accept[{unit}]"),
                ids::COLLISION_TWO_WAY_ACCEPT,
                [1, 1, 1],
            )
            .workgroup_size(WG)
            .read_write(&self.state)
            .read(self.search.status())
            .read(&self.meta)
            .read(b.coloring.status())
            .push(&push),
        );
    }

    /// Records step `step`: the distances D_i, the backward step and the forward step.
    fn record_step(&self, g: &mut Graph, b: &PairBuffers, step: u32, color_cap: u32) {
        let x = self.search.positions();
        g.dispatch(
            Dispatch::indirect(
                format!("two_way.distances[{step}]"),
                ids::COLLISION_TWO_WAY_DISTANCES,
                self.meta.slice(2..5),
            )
            .workgroup_size(WG)
            .read_write(&self.state)
            .read(x)
            .read(b.cons.lo())
            .read(&self.meta)
            .read_write(&self.dmin)
            .read_write(&self.dfree)
            .write(b.closest.lo())
            .write(&b.floor_list)
            .read_write(&self.blocked)
            .read(b.cons.hi())
            .write(b.closest.hi())
            .push(&self.params(0, 0)),
        );
        self.record_backward(g, b, step, color_cap);
        self.record_forward(g, b, step);
    }

    /// Records the backward step of step `step`: the multicolor sweep (fused or per color) or
    /// the log-barrier baseline's gradient pass.
    fn record_backward(&self, g: &mut Graph, b: &PairBuffers, step: u32, color_cap: u32) {
        let x = self.search.positions();
        // Bindings 0..=6 shared by the contact kernels: state, x, y, constraints (low
        // binding), meta and the coloring's offsets and grouped indices; each kernel binds
        // the constraints' high binding last.
        let contact_kernel = |d: Dispatch| {
            d.workgroup_size(WG)
                .read(&self.state)
                .read(x)
                .read_write(&self.y)
                .read(b.cons.lo())
                .read(&self.meta)
                .read(b.coloring.offsets())
                .read(b.coloring.grouped())
        };
        let color_kernel = |name: String, id, c: u32| {
            let a = 3 * c as usize;
            contact_kernel(Dispatch::indirect(
                name,
                id,
                self.color_args.slice(a..a + 3),
            ))
        };
        let barrier = self.y0.is_some();
        if let Some(y0) = &self.y0 {
            // Log-barrier baseline: the step's target is y^[k+1] minus the barrier gradient.
            g.copy(format!("two_way.barrier_target[{step}]"), y0, &self.y);
        }
        if barrier && !self.fused {
            for c in 0..color_cap {
                let name = format!("two_way.barrier_sweep[{step}.{c}]");
                g.dispatch(
                    color_kernel(name, ids::COLLISION_TWO_WAY_BARRIER, c)
                        .read(&self.inv_w)
                        .read(b.cons.hi())
                        .push(&self.params(c, 0)),
                );
            }
        }
        if self.fused {
            // The baseline's gradient pass is one pass, not a sweep to repeat.
            let passes = if barrier { 1 } else { self.settings.sweeps };
            for sweep in 0..passes {
                g.dispatch(
                    contact_kernel(Dispatch::new(
                        format!("two_way.fused_sweep[{step}.{sweep}]"),
                        ids::COLLISION_TWO_WAY_FUSED_SWEEP,
                        [1, 1, 1],
                    ))
                    .spec(&[barrier as u32])
                    .read_write(&b.lambda)
                    .read(&self.inv_w)
                    .read(&self.edges)
                    .read(&self.rest)
                    .read_write(&self.lambda_e)
                    .read(&self.edge_offsets)
                    .read(b.cons.hi())
                    .push(&self.params(MAX_COLORS, self.edge_ranges.len() as u32)),
                );
            }
        }
        let sweeps = if self.y0.is_some() || self.fused {
            0
        } else {
            self.settings.sweeps
        };
        for sweep in 0..sweeps {
            for c in 0..color_cap {
                let name = format!("two_way.contact_sweep[{step}.{sweep}.{c}]");
                g.dispatch(
                    color_kernel(name, ids::COLLISION_TWO_WAY_CONTACT_SWEEP, c)
                        .read_write(&b.lambda)
                        .read(&self.inv_w)
                        .read(b.cons.hi())
                        .push(&self.params(c, 0)),
                );
            }
            for (k, &(offset, count)) in self.edge_ranges.iter().enumerate() {
                g.dispatch(
                    Dispatch::new(
                        format!("two_way.edge_sweep[{step}.{sweep}.{k}]"),
                        ids::COLLISION_TWO_WAY_EDGE_SWEEP,
                        groups(count as usize),
                    )
                    .workgroup_size(WG)
                    .read(&self.state)
                    .read(x)
                    .read_write(&self.y)
                    .read(&self.edges)
                    .read(&self.rest)
                    .read_write(&self.lambda_e)
                    .read(&self.inv_w)
                    .push(&self.params(offset, count)),
                );
            }
        }
    }

    /// Records the forward step of step `step`: collider bounds, floor release, shared
    /// fractions, the forward step and the end-of-step update.
    fn record_forward(&self, g: &mut Graph, b: &PairBuffers, step: u32) {
        let x = self.search.positions();
        if self.num_colliders > 0 {
            g.dispatch(
                Dispatch::new(
                    format!("two_way.collider_bound[{step}]"),
                    ids::COLLISION_TWO_WAY_COLLIDER_BOUND,
                    groups(self.n),
                )
                .workgroup_size(WG)
                .read(&self.state)
                .read(x)
                .read_write(&self.y)
                .read(&self.inv_w)
                .read(&self.colliders)
                .read(&self.collider_time)
                .write(&self.collider_alpha)
                .read(&self.collider_offsets)
                .push(&self.params(0, self.num_colliders as u32)),
            );
        }
        if self.settings.floor_release.is_some() {
            g.dispatch(
                Dispatch::new(
                    format!("two_way.release[{step}]"),
                    ids::COLLISION_TWO_WAY_RELEASE,
                    [1, 1, 1],
                )
                .workgroup_size(WG)
                .read(&self.state)
                .read(x)
                .read(&self.y)
                .read(b.cons.lo())
                .read(&self.meta)
                .read(&self.dfree)
                .read(b.closest.lo())
                .read_write(&b.floor_list)
                .read_write(&self.alpha_c)
                .read_write(&self.blocked)
                .read(&self.collider_alpha)
                .read(b.cons.hi())
                .read(b.closest.hi())
                .push(&self.params(0, 0)),
            );
        }
        if self.num_groups > 0 {
            g.fill(
                format!("two_way.reset_group_fractions[{step}]"),
                self.group_fraction.slice(0..self.num_groups),
                ONE_BITS + 1,
            );
            g.dispatch(
                Dispatch::new(
                    format!("two_way.group_fraction[{step}]"),
                    ids::COLLISION_TWO_WAY_GROUP_FRACTION,
                    groups(self.n),
                )
                .workgroup_size(WG)
                .read(&self.state)
                .read(x)
                .read(&self.y)
                .read(&self.dmin)
                .read(&self.on_surface)
                .read(&self.blocked)
                .read(&self.group_of)
                .read_write(&self.group_fraction)
                .read(&self.collider_alpha)
                .push(&self.params(0, 0)),
            );
        }
        g.dispatch(
            Dispatch::new(
                format!("two_way.forward[{step}]"),
                ids::COLLISION_TWO_WAY_FORWARD,
                groups(self.n),
            )
            .workgroup_size(WG)
            .read_write(&self.state)
            .read_write(x)
            .read(&self.y)
            .read_write(&self.dmin)
            .read_write(&self.r)
            .read(&self.on_surface)
            .read_write(&self.dfree)
            .read_write(&self.blocked)
            .read(&self.alpha_c)
            .read(&self.group_of)
            .read(&self.group_fraction)
            .read(&self.collider_alpha)
            .push(&self.params(0, 0)),
        );
        g.dispatch(
            Dispatch::new(
                format!("two_way.update[{step}]"),
                ids::COLLISION_TWO_WAY_UPDATE,
                [1, 1, 1],
            )
            .workgroup_size(WG)
            .read_write(&self.state)
            .push(&self.params(0, 0)),
        );
    }
}
