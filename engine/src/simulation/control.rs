//! Changing a running [`Simulation`] between frames: pinned-vertex targets, external loads,
//! collider motion, and adding or removing bodies.
//!
//! Every call here is made between [`Simulation::step_frame`] calls (never while a step runs)
//! and checks its arguments first: a body out of range or unknown, a wrong length or a
//! non-finite value returns [`SimError::InvalidArgument`] naming the argument and changes
//! nothing; a feature the solver lacks returns [`SimError::Unsupported`].
//!
//! # Values only: the persistent buffers are rewritten in place
//!
//! - [`Simulation::set_pin_targets`] moves a body's pinned vertices (the scene's `fixed` sets,
//!   not the scripted `motion` sets). The targets go into a host-visible buffer that a graph
//!   copies onto the pinned vertices' positions (one copy per run of consecutive vertices),
//!   so the pins jump to their targets at once; the solvers keep them there and the elastic
//!   bodies follow during the next steps. Call it every frame with small increments to move a
//!   pin smoothly.
//! - [`Simulation::set_external_forces`] (one force per vertex, N) and
//!   [`Simulation::set_loads`] (the scene's `force` entries: a total spread over a vertex set,
//!   or a traction over its boundary faces) replace a body's constant loads, through a
//!   host-visible mirror copied onto the solver's force buffer. Newton and XPBD only.
//! - [`Simulation::set_collider`] and [`Simulation::set_collider_velocity`] give a collider a
//!   new pose (at the current time), friction and velocity, written into the solver's
//!   host-visible collider buffer. Newton and XPBD only (symplectic Euler compiles its ground
//!   plane into its frame). The number of colliders is fixed at creation.
//!
//! The mirrors and copy graphs are created on a setter's first call and reused afterwards:
//! later calls allocate no GPU memory and compile nothing.
//!
//! # Topology changes rebuild the solver
//!
//! [`Simulation::add_body`] and [`Simulation::remove_body`] rebuild the simulation for the new
//! scene: the model, every solver buffer, the colour sets, all graphs and the readback buffers
//! are created anew (so [`Simulation::positions_view`] names a new buffer afterwards), and mesh
//! files are read again. What carries over: the positions and velocities of the bodies that
//! stay (bit for bit), their pin targets and loads as last set, the colliders as last set, the
//! simulated time (scripted motions and moving colliders continue) and every scene setting.
//! Solver-internal warm starts (the PCG's previous solution) start afresh. An added body
//! starts at its scene state (its transform and initial velocity); with a collision method it
//! must not intersect anything.

use super::{SimError, Simulation};
use crate::math::{vec4, vec4s};
use crate::model::{distribute_loads, SimModel};
use crate::scene::{Body, Collider, ColliderShape, Force, Scene};
use crate::vk::{BufferUsage, CompileOptions, CompiledGraph, GpuBuffer, Graph, VkError};
use std::ops::Range;

/// A body of a running simulation: its index (scene order) or its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyRef<'a> {
    /// The index in the scene's body list (and in [`crate::model::SimModel::bodies`]).
    Index(usize),
    /// The body's name.
    Name(&'a str),
}

impl From<usize> for BodyRef<'_> {
    fn from(i: usize) -> Self {
        BodyRef::Index(i)
    }
}

impl<'a> From<&'a str> for BodyRef<'a> {
    fn from(name: &'a str) -> Self {
        BodyRef::Name(name)
    }
}

impl<'a> From<&'a String> for BodyRef<'a> {
    fn from(name: &'a String) -> Self {
        BodyRef::Name(name)
    }
}

/// A host-visible mirror and the graph copying it into a solver buffer.
struct Upload {
    mirror: GpuBuffer<[f32; 4]>,
    graph: CompiledGraph,
}

/// Host state of the between-steps setters.
pub(super) struct Control {
    /// Pinned vertices (inverse mass 0, no scripted motion), ascending model indices.
    pins: Vec<u32>,
    /// Their current targets (m).
    pin_targets: Vec<[f64; 3]>,
    /// Created by the first `set_pin_targets`.
    pin_upload: Option<Upload>,
    /// Created by the first load setter.
    force_upload: Option<Upload>,
}

impl Control {
    /// The pinned vertices of `model` at their rest positions; no GPU resource yet.
    pub(super) fn new(model: &SimModel) -> Control {
        let pins: Vec<u32> = (0..model.positions.len())
            .filter(|&v| {
                model.inv_mass[v] == 0.0
                    && model.vertex_motion.get(v).is_none_or(|&m| m == u32::MAX)
            })
            .map(|v| v as u32)
            .collect();
        let pin_targets = pins.iter().map(|&v| model.positions[v as usize]).collect();
        Control {
            pins,
            pin_targets,
            pin_upload: None,
            force_upload: None,
        }
    }
}

fn invalid(argument: impl Into<String>, message: impl Into<String>) -> SimError {
    SimError::InvalidArgument {
        argument: argument.into(),
        message: message.into(),
    }
}

fn finite3(v: &[f64; 3]) -> bool {
    v.iter().all(|x| x.is_finite())
}

/// Checks `values` has `len` finite entries; errors name `argument` or `argument[k]`.
fn check_vectors(
    argument: &str,
    values: &[[f64; 3]],
    len: usize,
    what: &str,
) -> Result<(), SimError> {
    if values.len() != len {
        return Err(invalid(
            argument,
            format!("{} values given for {len} {what}", values.len()),
        ));
    }
    if let Some(k) = values.iter().position(|v| !finite3(v)) {
        return Err(invalid(
            format!("{argument}[{k}]"),
            format!("must be finite, got {:?}", values[k]),
        ));
    }
    Ok(())
}

fn add(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

/// The collider moved by its velocity over `t` seconds (`t` may be negative).
fn shifted(c: &Collider, t: f64) -> Collider {
    let d = c.velocity.map(|v| v * t);
    let shape = match c.shape {
        ColliderShape::Plane { normal, offset } => {
            let l = (normal[0] * normal[0] + normal[1] * normal[1] + normal[2] * normal[2]).sqrt();
            let along = (normal[0] * d[0] + normal[1] * d[1] + normal[2] * d[2]) / l;
            ColliderShape::Plane {
                normal,
                offset: offset + along,
            }
        }
        ColliderShape::Sphere { center, radius } => ColliderShape::Sphere {
            center: add(center, d),
            radius,
        },
        ColliderShape::Box { min, max } => ColliderShape::Box {
            min: add(min, d),
            max: add(max, d),
        },
    };
    Collider {
        shape,
        friction: c.friction,
        velocity: c.velocity,
        angular_velocity: c.angular_velocity,
        offset: c.offset,
    }
}

/// The scene file's rules for a collider, with errors naming `collider.…`.
fn check_collider(c: &Collider) -> Result<(), SimError> {
    if !(c.friction.is_finite() && c.friction >= 0.0) {
        return Err(invalid(
            "collider.friction",
            format!("must be a non-negative coefficient, got {}", c.friction),
        ));
    }
    if !finite3(&c.velocity) {
        return Err(invalid("collider.velocity", "must be finite (m/s)"));
    }
    if let Err(m) = crate::scene::check_spin(c) {
        return Err(invalid("collider.angular_velocity", &m));
    }
    if !(c.offset.is_finite() && c.offset >= 0.0) {
        return Err(invalid(
            "collider.offset",
            format!("must be a non-negative thickness (m), got {}", c.offset),
        ));
    }
    match c.shape {
        ColliderShape::Plane { normal, offset } => {
            if !finite3(&normal) || normal.iter().all(|&x| x == 0.0) {
                return Err(invalid(
                    "collider.shape.plane.normal",
                    "must be a non-zero finite direction",
                ));
            }
            if !offset.is_finite() {
                return Err(invalid("collider.shape.plane.offset", "must be finite (m)"));
            }
        }
        ColliderShape::Sphere { center, radius } => {
            if !finite3(&center) {
                return Err(invalid(
                    "collider.shape.sphere.center",
                    "must be finite (m)",
                ));
            }
            if !(radius.is_finite() && radius > 0.0) {
                return Err(invalid(
                    "collider.shape.sphere.radius",
                    format!("must be a positive length in m, got {radius}"),
                ));
            }
        }
        ColliderShape::Box { min, max } => {
            if !finite3(&min) || !finite3(&max) || (0..3).any(|k| min[k] > max[k]) {
                return Err(invalid(
                    "collider.shape.box",
                    "min and max must be finite with min ≤ max (m)",
                ));
            }
        }
    }
    Ok(())
}

fn range(r: &Range<u32>) -> Range<usize> {
    r.start as usize..r.end as usize
}

fn vk_message(graph: &str) -> impl Fn(String) -> SimError + '_ {
    move |message| {
        SimError::Vk(VkError::Graph {
            graph: graph.into(),
            message,
        })
    }
}

impl Simulation {
    /// The index of `body` (an index or a name); an unknown one is
    /// [`SimError::InvalidArgument`].
    pub fn body_index<'a>(&self, body: impl Into<BodyRef<'a>>) -> Result<usize, SimError> {
        let n = self.model.bodies.len();
        match body.into() {
            BodyRef::Index(i) if i < n => Ok(i),
            BodyRef::Index(i) => Err(invalid(
                "body",
                format!("index {i} is out of range: the simulation has {n} bodies"),
            )),
            BodyRef::Name(name) => self
                .model
                .bodies
                .iter()
                .position(|b| b.name == name)
                .ok_or_else(|| invalid("body", format!("no body is named '{name}'"))),
        }
    }

    /// The scene as simulated now: bodies added and removed, colliders at the poses they
    /// would have had at time 0 to be where [`Simulation::set_collider`] put them, loads as
    /// last given to [`Simulation::set_loads`] (per-vertex forces from
    /// [`Simulation::set_external_forces`] have no scene form).
    pub fn scene(&self) -> &Scene {
        &self.scene
    }

    /// Simulated time (s).
    pub fn time(&self) -> f64 {
        self.state.clock.time()
    }

    /// Frames stepped since creation (carried over by [`Simulation::add_body`] and
    /// [`Simulation::remove_body`]).
    pub fn frames(&self) -> u64 {
        self.frames
    }

    fn pin_range(&self, body: usize) -> Range<usize> {
        let r = &self.model.bodies[body].vertices;
        let p = &self.control.pins;
        p.partition_point(|&v| v < r.start)..p.partition_point(|&v| v < r.end)
    }

    /// The pinned vertices of `body` (its scene `fixed` sets, without scripted ones), as
    /// ascending model vertex indices: the order of [`Simulation::set_pin_targets`].
    pub fn pinned_vertices<'a>(&self, body: impl Into<BodyRef<'a>>) -> Result<&[u32], SimError> {
        let b = self.body_index(body)?;
        Ok(&self.control.pins[self.pin_range(b)])
    }

    /// The current targets (m) of `body`'s pinned vertices, in [`Simulation::pinned_vertices`]
    /// order (their rest positions until moved).
    pub fn pin_targets<'a>(&self, body: impl Into<BodyRef<'a>>) -> Result<&[[f64; 3]], SimError> {
        let b = self.body_index(body)?;
        Ok(&self.control.pin_targets[self.pin_range(b)])
    }

    /// Moves `body`'s pinned vertices to `targets` (m, one per vertex of
    /// [`Simulation::pinned_vertices`], in that order). They jump there at once and are held
    /// there by every solver.
    pub fn set_pin_targets<'a>(
        &mut self,
        body: impl Into<BodyRef<'a>>,
        targets: &[[f64; 3]],
    ) -> Result<(), SimError> {
        let b = self.body_index(body)?;
        let r = self.pin_range(b);
        if r.is_empty() {
            return Err(invalid(
                "body",
                format!(
                    "body '{}' has no pinned vertex (scene `fixed` sets)",
                    self.model.bodies[b].name
                ),
            ));
        }
        check_vectors("targets", targets, r.len(), "pinned vertices")?;
        if self.control.pin_upload.is_none() {
            self.control.pin_upload = Some(self.pin_upload()?);
        }
        let Some(up) = &self.control.pin_upload else {
            return Ok(());
        };
        for (k, t) in r.clone().zip(targets) {
            up.mirror.write_at(k, &[vec4(*t)])?;
        }
        up.graph.run()?;
        self.control.pin_targets[r].copy_from_slice(targets);
        // Contact methods with a safe state of their own take the moved pins.
        self.contacts.positions_changed(&self.state)?;
        Ok(())
    }

    /// The pin targets' mirror and the graph copying it onto the positions.
    fn pin_upload(&self) -> Result<Upload, SimError> {
        let ctx = self.context();
        let pins = &self.control.pins;
        let mirror =
            ctx.create_buffer::<[f32; 4]>("sim.pin_targets", pins.len(), BufferUsage::HOST_WRITE)?;
        mirror.write(&vec4s(&self.control.pin_targets))?;
        let x = &self.state.x;
        let mut g = Graph::new("sim.set_pin_targets");
        let mut k = 0;
        while k < pins.len() {
            let mut e = k + 1;
            while e < pins.len() && pins[e] == pins[e - 1] + 1 {
                e += 1;
            }
            let dst = pins[k] as usize..pins[k] as usize + (e - k);
            g.copy(
                format!("sim.pins.{k}"),
                mirror.slice(k..e),
                x.slice(dst.clone()),
            );
            k = e;
        }
        let graph = g.compile(&ctx, CompileOptions::default())?;
        Ok(Upload { mirror, graph })
    }

    fn loads_supported(&self) -> Result<(), SimError> {
        let info = self.stepper.info();
        if info.loads {
            return Ok(());
        }
        Err(SimError::unsupported(
            "simulation.solver",
            format!(
                "external forces are not supported by the {} solver (newton, xpbd)",
                info.name
            ),
        ))
    }

    /// The constant external force on each vertex of `body` (N), in body vertex order.
    pub fn external_forces<'a>(
        &self,
        body: impl Into<BodyRef<'a>>,
    ) -> Result<&[[f64; 3]], SimError> {
        let b = self.body_index(body)?;
        Ok(&self.model.external_forces[range(&self.model.bodies[b].vertices)])
    }

    /// Replaces `body`'s constant external loads by one force per vertex (N, body vertex
    /// order). Newton and XPBD only.
    pub fn set_external_forces<'a>(
        &mut self,
        body: impl Into<BodyRef<'a>>,
        forces: &[[f64; 3]],
    ) -> Result<(), SimError> {
        self.loads_supported()?;
        let b = self.body_index(body)?;
        let r = range(&self.model.bodies[b].vertices);
        check_vectors("forces", forces, r.len(), "vertices of the body")?;
        self.upload_forces(r, forces)
    }

    /// Replaces `body`'s loads by `loads`, read as the scene file's `force` entries: a
    /// `total` force (N) spread evenly over a vertex set, or a `traction` (Pa) over the
    /// boundary faces inside it; sets select by body vertex index or by region of the rest
    /// configuration. An empty list removes every load. Newton and XPBD only.
    pub fn set_loads<'a>(
        &mut self,
        body: impl Into<BodyRef<'a>>,
        loads: &[Force],
    ) -> Result<(), SimError> {
        self.loads_supported()?;
        let b = self.body_index(body)?;
        for (k, l) in loads.iter().enumerate() {
            if l.total.is_none() == l.traction.is_none() {
                return Err(invalid(
                    format!("loads[{k}]"),
                    "give exactly one of `total` (N) or `traction` (Pa)",
                ));
            }
            if !l.total.iter().chain(&l.traction).all(finite3) {
                return Err(invalid(format!("loads[{k}]"), "must be finite"));
            }
            if let Some(r) = &l.vertices.region {
                if !finite3(&r.min) || !finite3(&r.max) || (0..3).any(|c| r.min[c] > r.max[c]) {
                    return Err(invalid(
                        format!("loads[{k}].vertices.region"),
                        "min and max must be finite with min ≤ max (m)",
                    ));
                }
            }
        }
        let body_range = &self.model.bodies[b];
        let r = range(&body_range.vertices);
        let base = body_range.vertices.start;
        let surface: Vec<[u32; 3]> = body_range
            .surface
            .iter()
            .map(|t| t.map(|v| v - base))
            .collect();
        let forces = distribute_loads(
            &|k| format!("loads[{k}]"),
            loads,
            &self.model.positions[r.clone()],
            &surface,
        )
        .map_err(|e| invalid(e.field.unwrap_or_else(|| "loads".into()), e.message))?;
        self.upload_forces(r, &forces)?;
        self.scene.bodies[b].force = loads.to_vec();
        Ok(())
    }

    /// Writes `forces` for model vertices `r` through the force mirror.
    fn upload_forces(&mut self, r: Range<usize>, forces: &[[f64; 3]]) -> Result<(), SimError> {
        self.loads_supported()?;
        if self.control.force_upload.is_none() {
            let ctx = self.context();
            let f_ext = &self.state.f_ext;
            let mirror = ctx.create_buffer::<[f32; 4]>(
                "sim.external_forces",
                f_ext.len(),
                BufferUsage::HOST_WRITE,
            )?;
            mirror.write(&vec4s(&self.model.external_forces))?;
            let mut g = Graph::new("sim.set_external_forces");
            g.copy("sim.external_forces", &mirror, f_ext);
            let graph = g.compile(&ctx, CompileOptions::default())?;
            self.control.force_upload = Some(Upload { mirror, graph });
        }
        let Some(up) = &self.control.force_upload else {
            return Ok(());
        };
        for (v, f) in r.clone().zip(forces) {
            up.mirror.write_at(v, &[vec4(*f)])?;
        }
        up.graph.run()?;
        self.model.external_forces[r].copy_from_slice(forces);
        Ok(())
    }

    /// Number of analytic colliders (fixed at creation).
    pub fn num_colliders(&self) -> usize {
        self.scene.colliders.len()
    }

    fn collider_index(&self, index: usize) -> Result<(), SimError> {
        let n = self.scene.colliders.len();
        if index >= n {
            return Err(invalid(
                "index",
                format!("collider {index} is out of range: the simulation has {n} colliders"),
            ));
        }
        Ok(())
    }

    /// Collider `index` at the current time: its pose (moved by its velocity so far),
    /// friction and velocity.
    pub fn collider(&self, index: usize) -> Result<Collider, SimError> {
        self.collider_index(index)?;
        Ok(shifted(&self.scene.colliders[index], self.time()))
    }

    /// Replaces collider `index`: `collider.shape` is its pose now (it moves on at
    /// `collider.velocity`, m/s), with its friction coefficient. The shape kind may change.
    /// Newton and XPBD only.
    pub fn set_collider(&mut self, index: usize, collider: Collider) -> Result<(), SimError> {
        let info = self.stepper.info();
        if !info.general_colliders {
            return Err(SimError::unsupported(
                "simulation.solver",
                format!(
                    "the {} solver compiles its static ground plane into its graphs; moving \
                     colliders need the newton or xpbd solver",
                    info.name
                ),
            ));
        }
        self.collider_index(index)?;
        check_collider(&collider)?;
        let at_zero = shifted(&collider, -self.time());
        let before = std::mem::replace(&mut self.scene.colliders[index], at_zero);
        let packed = crate::contact::colliders::from_scene(&self.scene);
        if let Err(e) = self.state.write_colliders(&packed) {
            self.scene.colliders[index] = before;
            return Err(e.into());
        }
        Ok(())
    }

    /// Gives collider `index` the velocity `velocity` (m/s) from its current pose on.
    pub fn set_collider_velocity(
        &mut self,
        index: usize,
        velocity: [f64; 3],
    ) -> Result<(), SimError> {
        let mut c = self.collider(index)?;
        c.velocity = velocity;
        self.set_collider(index, c)
    }

    /// Adds `body` (at its scene state) after the existing bodies and returns its index.
    /// Rebuilds the solver (see the module documentation: what carries over, what is
    /// reallocated); the existing bodies keep their state bit for bit. The body is checked
    /// with the scene file's rules (errors name `body[index].…`).
    pub fn add_body(&mut self, body: Body) -> Result<usize, SimError> {
        let mut scene = self.scene.clone();
        scene.bodies.push(body);
        let keep: Vec<usize> = (0..self.model.bodies.len()).collect();
        self.rebuild(scene, &keep)?;
        Ok(self.model.bodies.len() - 1)
    }

    /// Removes `body` and returns its scene description; the later bodies' indices drop by
    /// one. Rebuilds the solver (see the module documentation); the remaining bodies keep
    /// their state bit for bit. Removing the last body is an error.
    pub fn remove_body<'a>(&mut self, body: impl Into<BodyRef<'a>>) -> Result<Body, SimError> {
        let b = self.body_index(body)?;
        if self.model.bodies.len() == 1 {
            return Err(invalid("body", "cannot remove the simulation's only body"));
        }
        let mut scene = self.scene.clone();
        let removed = scene.bodies.remove(b);
        let keep: Vec<usize> = (0..self.model.bodies.len()).filter(|&i| i != b).collect();
        self.rebuild(scene, &keep)?;
        Ok(removed)
    }

    /// Rebuilds the simulation for `scene`, whose first bodies are the current bodies `keep`
    /// (in order), carrying their state, pins and loads, the time and the frame count. On
    /// error nothing changes.
    fn rebuild(&mut self, scene: Scene, keep: &[usize]) -> Result<(), SimError> {
        scene.validate("simulation")?;
        // The current state, bit for bit.
        self.state.mirror.refresh()?;
        let mirror = &self.state.mirror;
        let (x_old, v_old) = match mirror.is_host_visible() {
            true => (mirror.positions().to_vec(), mirror.velocities().to_vec()),
            false => {
                return Err(vk_message("sim.readback")(
                    "readback buffers are not host-visible".into(),
                ))
            }
        };
        let old: Vec<Range<usize>> = keep
            .iter()
            .map(|&i| range(&self.model.bodies[i].vertices))
            .collect();
        let forces = &self.model.external_forces;
        let new_range = |m: &SimModel, j: usize| range(&m.bodies[j].vertices);
        let ctx = self.context();
        let mut new = Simulation::build(&ctx, &scene, |m| {
            for (j, r) in old.iter().enumerate() {
                let nr = new_range(m, j);
                if nr.len() == r.len() {
                    m.external_forces[nr].copy_from_slice(&forces[r.clone()]);
                }
            }
        })?;
        if let Some((j, r)) = old
            .iter()
            .enumerate()
            .find(|(j, r)| new_range(&new.model, *j).len() != r.len())
        {
            return Err(invalid(
                "body",
                format!(
                    "body '{}' has {} vertices after the rebuild, {} before (its mesh file \
                     changed?)",
                    new.model.bodies[j].name,
                    new_range(&new.model, j).len(),
                    r.len()
                ),
            ));
        }
        let mut x = vec4s(&new.model.positions);
        let mut v = vec4s(&new.model.velocities);
        for (j, r) in old.iter().enumerate() {
            let nr = new_range(&new.model, j);
            x[nr.clone()].copy_from_slice(&x_old[r.clone()]);
            v[nr].copy_from_slice(&v_old[r.clone()]);
        }
        // Methods that need an intersection-free start check the bodies where they are now
        // (the build checked the scene's initial poses).
        let method = crate::contact::method(new.scene.collision.method);
        if method.needs_intersection_free_start() {
            let x64: Vec<[f64; 3]> = x
                .iter()
                .map(|p| [p[0], p[1], p[2]].map(f64::from))
                .collect();
            crate::contact::start_check::check_start(
                &new.model,
                &x64,
                &crate::contact::colliders::from_scene(&new.scene),
                self.state.clock.time(),
                method.name(),
                "with the bodies where they are now",
            )?;
        }
        new.state.x.write(&x)?;
        new.state.v.write(&v)?;
        new.state.clock.set_steps(self.state.clock.steps());
        new.stepper.clock_changed(&new.state)?;
        new.contacts.positions_changed(&new.state)?;
        for (j, &i) in keep.iter().enumerate() {
            let (ro, rn) = (self.pin_range(i), new.pin_range(j));
            if ro.len() == rn.len() {
                new.control.pin_targets[rn].copy_from_slice(&self.control.pin_targets[ro]);
            }
        }
        new.frames = self.frames;
        *self = new;
        Ok(())
    }
}
