// Shared prelude of every Supple kernel.
// Workgroup size is specialization constant 0 (set by the host per device); kernels index with
// gl_LocalInvocationID.x and gl_WorkGroupID.x. Subgroup operations are used freely; the host
// guarantees WG is a multiple of the subgroup size.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_shuffle : require

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;

// Largest subgroup count per workgroup that shared scratch arrays support (WG / subgroup size).
#define MAX_SUBGROUPS 64u
