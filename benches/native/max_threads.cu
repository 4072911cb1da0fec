// Row 9 baseline: the occupancy API's answer for how many warps can be
// resident at once (an empty kernel in blocks of 1 and 2 warps).
#include "common.cuh"

__global__ void empty_kernel() {}

int main() {
    int one = resident_blocks(empty_kernel, WARP), two = resident_blocks(empty_kernel, 2 * WARP) * 2;
    row_value("max_threads", "", "threads", std::max(one, two),
              field("warps_1_warp_blocks", one) + field("warps_2_warp_blocks", two) + field("sms", sm_count()) +
                  field("how", GPU_RT "OccupancyMaxActiveBlocksPerMultiprocessor, empty kernel"));
    return 0;
}
