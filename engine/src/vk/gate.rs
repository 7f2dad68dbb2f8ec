//! Gated sections of a command graph: parts that run only while a condition word, written by an
//! earlier kernel of the same graph (or of an earlier submission), holds. The host records the
//! whole loop body once; the device decides which parts launch, without a host round trip (a
//! device-driven loop: the Newton stepper's iterations, line search and stop test).
//!
//! [`GatedGraph::build`] rewrites each gated section: every direct dispatch becomes an indirect
//! one with its own argument slot, fills and copies become dispatches of
//! `kernels/primitives/fill_u32.comp` and `copy_u32.comp`, and one dispatch of
//! `kernels/primitives/gate_args.comp` before the section writes the slots: the recorded
//! workgroup counts while `flags[word] & mask != 0`, zero workgroups otherwise. Indirect
//! dispatches inside a section keep their own arguments (a solver that decides its own
//! iterations). Barriers follow from the declared accesses as for any graph: the gate writes
//! the slots its section reads as indirect arguments. Reference: `cpu_reference::gate`.
//!
//! Where the context has conditional rendering ([`Context::conditional_rendering`]), a
//! closed section is skipped rather than launched empty: each section gets one more slot
//! first, its predicate, whose recorded value is `[1, 0, 0, 0]` and whose closed value is the
//! gate's `[0, 1, 1, 0]`, so its first word is non-zero iff the section is open; the
//! rewritten dispatches are predicated on that word ([`Dispatch::only_if`]; indirect
//! dispatches that keep their own arguments are not, as without it). The argument buffer is
//! then host-visible, so that after a run the host can count the skipped dispatches
//! ([`super::CompiledGraph::count_skipped_dispatches`]).
//!
//! A whole graph can be skipped too ([`GatedGraph::skip_unless`], with conditional rendering
//! only): one more gate first, over every slot, writes slot 0 (the graph's predicate) and
//! closes every section's slots while its condition fails; every dispatch of the parts that
//! always run and every section gate is predicated on slot 0. Parts added with
//! [`GatedGraph::unconditional`] are left as recorded: they carry their own predicates and the
//! nodes that reset them (a PCG run, `linear::pcg`). A section added with
//! [`GatedGraph::gated_like_previous`] has no gate of its own: its slots follow the previous
//! section's, whose gate writes both.

use super::buffer::{BufferUsage, GpuBuffer};
use super::context::Context;
use super::error::{VkError, VkResult};
use super::graph::{Access, BufferSlice, Dispatch, Graph, Groups, NodeKind};
use super::kernel::ids;

/// Workgroup size of the gate, fill and copy kernels.
const WG: u32 = 64;

/// One part of a [`GatedGraph`].
enum Part {
    Always(Graph),
    Unconditional(Graph),
    /// A section under the previous section's gate ([`GatedGraph::gated_like_previous`]).
    LikePrevious(Graph),
    Gated {
        section: Graph,
        flags: BufferSlice,
        word: u32,
        mask: u32,
    },
}

/// A part with its gated section rewritten: the gate's name, condition and push constants
/// (word, mask, first slot, slot count) and the section's dispatches.
enum Rewritten {
    Always(Graph),
    Unconditional(Graph),
    /// The rewritten dispatches of a section whose slots the previous gate writes.
    Nodes(Vec<Dispatch>),
    Gated {
        name: String,
        flags: BufferSlice,
        push: [u32; 4],
        nodes: Vec<Dispatch>,
    },
}

/// A graph assembled from parts that always run and sections gated by a device-written word.
pub struct GatedGraph {
    name: String,
    parts: Vec<Part>,
    /// The condition of the whole graph ([`GatedGraph::skip_unless`]): flags, word, mask.
    whole: Option<(BufferSlice, u32, u32)>,
}

impl GatedGraph {
    /// An empty graph named `name`.
    pub fn new(name: impl Into<String>) -> Self {
        GatedGraph {
            name: name.into(),
            parts: Vec::new(),
            whole: None,
        }
    }

    /// Where the context has conditional rendering: skips the whole graph (but its
    /// [`GatedGraph::unconditional`] parts) while `flags[word] & mask` is zero when the graph
    /// starts (read once, by its first dispatch). The caller guarantees that the graph then
    /// has no effect: every section closed and the parts that always run doing nothing.
    /// Without conditional rendering this changes nothing.
    pub fn skip_unless(&mut self, flags: &GpuBuffer<u32>, word: u32, mask: u32) {
        self.whole = Some((flags.into(), word, mask));
    }

    /// Appends nodes that run even when the whole graph is skipped: nodes with their own
    /// predicates and those that write them.
    pub fn unconditional(&mut self, g: Graph) {
        self.parts.push(Part::Unconditional(g));
    }

    /// Appends nodes that always run.
    pub fn always(&mut self, g: Graph) {
        self.parts.push(Part::Always(g));
    }

    /// Appends a section that runs only while `flags[word] & mask` is non-zero when the
    /// section is reached (the word is read once, by the section's gate dispatch).
    pub fn gated(&mut self, section: Graph, flags: impl Into<BufferSlice>, word: u32, mask: u32) {
        self.parts.push(Part::Gated {
            section,
            flags: flags.into(),
            word,
            mask,
        });
    }

    /// Appends a section opened and closed with the previous gated section, by its gate (no
    /// gate of its own: one dispatch fewer). For a section the same condition opens, where
    /// nothing between the two sections changes the condition word.
    pub fn gated_like_previous(&mut self, section: Graph) {
        self.parts.push(Part::LikePrevious(section));
    }

    /// Direct dispatches, fills and copies of the gated sections (argument slots needed).
    fn gated_nodes(&self) -> usize {
        self.parts
            .iter()
            .map(|p| match p {
                Part::Gated { section, .. } | Part::LikePrevious(section) => section
                    .nodes
                    .iter()
                    .filter(|n| {
                        !matches!(&n.kind, NodeKind::Dispatch(d) if matches!(d.groups, Groups::Indirect(_)))
                    })
                    .count(),
                Part::Always(_) | Part::Unconditional(_) => 0,
            })
            .sum()
    }

    /// The graph to compile: the gated sections rewritten as described in the module
    /// documentation. Allocates the argument slots and uploads the recorded workgroup counts
    /// (the returned graph keeps both buffers alive).
    pub fn build(self, ctx: &Context) -> VkResult<Graph> {
        let align = ctx.shared.caps.min_storage_offset_alignment.max(16);
        let sections = self
            .parts
            .iter()
            .filter(|p| matches!(p, Part::Gated { .. }))
            .count();
        let pad = (align / 16) as usize;
        let conditional = ctx.conditional_rendering();
        let whole = self.whole.clone().filter(|_| conditional);
        let slots = self.gated_nodes().max(1)
            + sections * (pad + conditional as usize)
            + whole.is_some() as usize;
        let mut usage = BufferUsage::STORAGE | BufferUsage::INDIRECT;
        if conditional {
            usage |= BufferUsage::CONDITION | BufferUsage::HOST_READ;
        }
        let args =
            ctx.create_buffer::<[u32; 4]>(&format!("{}.gate_args", self.name), slots, usage)?;
        // First the rewritten sections and every slot's recorded counts, then the nodes.
        let mut counts: Vec<[u32; 4]> = Vec::with_capacity(slots);
        // The whole graph's predicate: slot 0, open while recorded.
        let graph_predicate = whole.as_ref().map(|_| {
            counts.push([1, 0, 0, 0]);
            args.slice(0..1)
        });
        let mut rewritten: Vec<Rewritten> = Vec::with_capacity(self.parts.len());
        // The last gated section: its index in `rewritten` and its first slot.
        let mut last_gated: Option<(usize, usize)> = None;
        for part in self.parts {
            let next = match part {
                Part::Always(g) => Rewritten::Always(match &graph_predicate {
                    Some(w) => g.only_if(w.clone()),
                    None => g,
                }),
                Part::Unconditional(g) => Rewritten::Unconditional(g),
                Part::LikePrevious(section) => {
                    let Some((at, first)) = last_gated else {
                        return Err(VkError::Graph {
                            graph: self.name.clone(),
                            message: format!(
                                "section '{}' is gated like the previous section, but none precedes it",
                                section.name()
                            ),
                        });
                    };
                    let predicate = conditional.then(|| args.slice(first..first + 1));
                    let nodes = rewrite_section(section, predicate, &mut counts, &args)?;
                    // The previous gate writes these slots too (contiguous: no padding).
                    if let Rewritten::Gated { push, .. } = &mut rewritten[at] {
                        push[3] = (counts.len() - first) as u32;
                    }
                    Rewritten::Nodes(nodes)
                }
                Part::Gated {
                    section,
                    flags,
                    word,
                    mask,
                } => {
                    // The section's slots are bound from its first: aligned for the binding.
                    while !((counts.len() * 16) as u64).is_multiple_of(align) {
                        counts.push([0, 1, 1, 0]);
                    }
                    let first = counts.len();
                    // The predicate slot: word 0 is 1 while open, 0 once the gate closes it.
                    let predicate = conditional.then(|| {
                        counts.push([1, 0, 0, 0]);
                        args.slice(first..first + 1)
                    });
                    let name = section.name().to_string();
                    let nodes = rewrite_section(section, predicate, &mut counts, &args)?;
                    last_gated = Some((rewritten.len(), first));
                    Rewritten::Gated {
                        name,
                        flags,
                        push: [word, mask, first as u32, (counts.len() - first) as u32],
                        nodes,
                    }
                }
            };
            rewritten.push(next);
        }
        if counts.is_empty() {
            counts.push([0; 4]);
        }
        let counts_buf = ctx.upload_buffer(
            &format!("{}.gate_counts", self.name),
            &counts,
            BufferUsage::STORAGE,
        )?;
        let mut out = Graph::new(self.name.clone());
        if let Some((flags, word, mask)) = whole {
            // Every slot: recorded counts while the graph's condition holds, closed otherwise
            // (the sections' own gates then rewrite theirs).
            let n = counts.len();
            out.dispatch(
                Dispatch::new(
                    format!("gate[{}]", self.name),
                    ids::PRIMITIVES_GATE_ARGS,
                    [1, 1, 1],
                )
                .workgroup_size(WG)
                .bind(flags, Access::READ)
                .read(&counts_buf)
                .write(args.slice(0..n))
                .push(&[word, mask, 0, n as u32]),
            );
        }
        for part in rewritten {
            match part {
                Rewritten::Always(g) | Rewritten::Unconditional(g) => out.append(g),
                Rewritten::Nodes(nodes) => {
                    for d in nodes {
                        out.dispatch(d);
                    }
                }
                Rewritten::Gated {
                    name,
                    flags,
                    push,
                    nodes,
                } => {
                    let (first, count) = (push[2] as usize, push[3] as usize);
                    if count > 0 {
                        let mut gate = Dispatch::new(
                            format!("gate[{name}]"),
                            ids::PRIMITIVES_GATE_ARGS,
                            [1, 1, 1],
                        )
                        .workgroup_size(WG)
                        .bind(flags, Access::READ)
                        .read(&counts_buf)
                        .write(args.slice(first..first + count))
                        .push(&push);
                        if let Some(w) = &graph_predicate {
                            gate = gate.only_if(w.clone());
                        }
                        out.dispatch(gate);
                    }
                    for d in nodes {
                        out.dispatch(d);
                    }
                }
            }
        }
        Ok(out)
    }
}

/// A section's nodes as dispatches: fills and copies as kernels, direct dispatches made
/// indirect with their recorded counts in a new slot of `counts` (of `args`) and predicated on
/// `predicate`; indirect dispatches keep their own arguments.
fn rewrite_section(
    section: Graph,
    predicate: Option<BufferSlice>,
    counts: &mut Vec<[u32; 4]>,
    args: &GpuBuffer<[u32; 4]>,
) -> VkResult<Vec<Dispatch>> {
    let mut nodes = Vec::with_capacity(section.nodes.len());
    for node in section.nodes {
        let d = match node.kind {
            NodeKind::Dispatch(d) => d,
            NodeKind::Fill { dst, value } => fill_dispatch(&node.name, dst, value)?,
            NodeKind::Copy { src, dst } => copy_dispatch(&node.name, src, dst)?,
        };
        nodes.push(match d.groups {
            Groups::Indirect(_) => d,
            Groups::Direct(g) => {
                let slot = counts.len();
                counts.push([g[0], g[1], g[2], 0]);
                Dispatch {
                    groups: Groups::Indirect(args.slice(slot..slot + 1)),
                    name: node.name.clone(),
                    condition: predicate.clone(),
                    ..d
                }
            }
        });
    }
    Ok(nodes)
}

/// A fill as a dispatch of `fill_u32.comp`.
fn fill_dispatch(name: &str, dst: BufferSlice, value: u32) -> VkResult<Dispatch> {
    let n = words(name, &dst)?;
    Ok(Dispatch::new(
        name,
        ids::PRIMITIVES_FILL_U32,
        [n.div_ceil(WG).max(1), 1, 1],
    )
    .workgroup_size(WG)
    .bind(dst, Access::WRITE)
    .push(&[n, value]))
}

/// A copy as a dispatch of `copy_u32.comp` (the smaller of both ranges).
fn copy_dispatch(name: &str, src: BufferSlice, dst: BufferSlice) -> VkResult<Dispatch> {
    let n = words(name, &src)?.min(words(name, &dst)?);
    Ok(Dispatch::new(
        name,
        ids::PRIMITIVES_COPY_U32,
        [n.div_ceil(WG).max(1), 1, 1],
    )
    .workgroup_size(WG)
    .bind(src, Access::READ)
    .bind(dst, Access::WRITE)
    .push(&n))
}

/// The 4-byte words of a range (fills and copies of gated sections move whole words).
fn words(name: &str, b: &BufferSlice) -> VkResult<u32> {
    if !b.size.is_multiple_of(4) || b.size / 4 > u32::MAX as u64 {
        return Err(VkError::Graph {
            graph: name.to_string(),
            message: format!(
                "a gated fill or copy of '{}' covers {} bytes: whole 4-byte words only",
                b.raw.name, b.size
            ),
        });
    }
    Ok((b.size / 4) as u32)
}
