//! Time integrators: [`newton`] (implicit Euler by Newton–PCG), [`xpbd`] (XPBD with multicolor
//! constraint sweeps) and [`symplectic`] (semi-implicit Euler, the RAINBOW baseline).

pub mod newton;
pub mod symplectic;
pub mod xpbd;
