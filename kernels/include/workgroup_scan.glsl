// Workgroup-wide exclusive add of one uint per invocation (subgroup scan + shared-memory carry
// across subgroups). Must be called in uniform control flow by the whole workgroup.
shared uint wgscan_subgroup_totals[MAX_SUBGROUPS];

uint workgroup_exclusive_add(uint value, out uint total) {
    uint ex = subgroupExclusiveAdd(value);
    uint sg_total = subgroupAdd(value);
    if (gl_NumSubgroups == 1u) {
        total = sg_total;
        return ex;
    }
    if (subgroupElect()) wgscan_subgroup_totals[gl_SubgroupID] = sg_total;
    barrier();
    uint offset = 0u;
    uint all = 0u;
    for (uint s = 0u; s < gl_NumSubgroups; ++s) {
        uint t = wgscan_subgroup_totals[s];
        offset += (s < gl_SubgroupID) ? t : 0u;
        all += t;
    }
    barrier();
    total = all;
    return offset + ex;
}

// Sum of one uint per invocation over the workgroup, valid in every invocation.
uint workgroup_add(uint value) {
    uint total;
    workgroup_exclusive_add(value, total);
    return total;
}

// Tile layouts of the streaming kernels. LANE_SERIAL = 0: in round k the workgroup reads WG
// consecutive uvec4s (coalesced; GPUs). LANE_SERIAL = 1: invocation `lid` owns ITEMS
// consecutive uvec4s and scans them serially, one subgroup scan per tile (CPU devices, where
// subgroup operations are expensive and caches are large).
