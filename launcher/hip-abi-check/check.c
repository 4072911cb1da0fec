/* Generated from launcher/src/hip/sys.rs by launcher/src/hip/abi_check.rs: do not edit.
 * Regenerate with: GPURUN_BLESS=1 cargo test -p launcher --test hip_abi
 * Compile: cc -fsyntax-only -D__HIP_PLATFORM_AMD__ -Werror=incompatible-pointer-types check.c
 */
#include <stddef.h>
#include <hip/hip_runtime_api.h>

/* Every entry of the Rust table, at the signature the Rust table uses. */
hipError_t (*check_hipInit)(unsigned int) = hipInit;
hipError_t (*check_hipDriverGetVersion)(int*) = hipDriverGetVersion;
hipError_t (*check_hipRuntimeGetVersion)(int*) = hipRuntimeGetVersion;
hipError_t (*check_hipGetDeviceCount)(int*) = hipGetDeviceCount;
hipError_t (*check_hipDeviceGet)(hipDevice_t*, int) = hipDeviceGet;
hipError_t (*check_hipSetDevice)(int) = hipSetDevice;
hipError_t (*check_hipDeviceGetAttribute)(int*, hipDeviceAttribute_t, int) = hipDeviceGetAttribute;
hipError_t (*check_hipDeviceGetName)(char*, int, hipDevice_t) = hipDeviceGetName;
hipError_t (*check_hipDeviceTotalMem)(size_t*, hipDevice_t) = hipDeviceTotalMem;
hipError_t (*check_hipMemGetInfo)(size_t*, size_t*) = hipMemGetInfo;
hipError_t (*check_hipDeviceSynchronize)(void) = hipDeviceSynchronize;
hipError_t (*check_hipModuleLoadData)(hipModule_t*, const void*) = hipModuleLoadData;
hipError_t (*check_hipModuleGetFunction)(hipFunction_t*, hipModule_t, const char*) = hipModuleGetFunction;
hipError_t (*check_hipModuleGetGlobal)(hipDeviceptr_t*, size_t*, hipModule_t, const char*) = hipModuleGetGlobal;
hipError_t (*check_hipModuleUnload)(hipModule_t) = hipModuleUnload;
hipError_t (*check_hipModuleLaunchKernel)(hipFunction_t, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, hipStream_t, void**, void**) = hipModuleLaunchKernel;
hipError_t (*check_hipModuleOccupancyMaxActiveBlocksPerMultiprocessor)(int*, hipFunction_t, int, size_t) = hipModuleOccupancyMaxActiveBlocksPerMultiprocessor;
hipError_t (*check_hipFuncGetAttribute)(int*, hipFunction_attribute, hipFunction_t) = hipFuncGetAttribute;
hipError_t (*check_hipMalloc)(void**, size_t) = hipMalloc;
hipError_t (*check_hipFree)(void*) = hipFree;
hipError_t (*check_hipMemset)(void*, int, size_t) = hipMemset;
hipError_t (*check_hipMemcpyHtoD)(hipDeviceptr_t, void*, size_t) = hipMemcpyHtoD;
hipError_t (*check_hipMemcpyDtoHAsync)(void*, hipDeviceptr_t, size_t, hipStream_t) = hipMemcpyDtoHAsync;
hipError_t (*check_hipHostMalloc)(void**, size_t, unsigned int) = hipHostMalloc;
hipError_t (*check_hipHostFree)(void*) = hipHostFree;
hipError_t (*check_hipHostGetDevicePointer)(void**, void*, unsigned int) = hipHostGetDevicePointer;
hipError_t (*check_hipStreamCreateWithFlags)(hipStream_t*, unsigned int) = hipStreamCreateWithFlags;
hipError_t (*check_hipStreamQuery)(hipStream_t) = hipStreamQuery;
hipError_t (*check_hipStreamSynchronize)(hipStream_t) = hipStreamSynchronize;
hipError_t (*check_hipStreamDestroy)(hipStream_t) = hipStreamDestroy;
const char* (*check_hipGetErrorName)(hipError_t) = hipGetErrorName;
const char* (*check_hipGetErrorString)(hipError_t) = hipGetErrorString;
#if HIP_VERSION_MAJOR < 6
hipError_t (*check_hipGetDeviceProperties)(hipDeviceProp_t*, int) = hipGetDeviceProperties;
#endif
#if HIP_VERSION_MAJOR >= 6
hipError_t (*check_hipGetDevicePropertiesR0600)(hipDeviceProp_tR0600*, int) = hipGetDevicePropertiesR0600;
#endif
#if HIP_VERSION_MAJOR >= 6
hipError_t (*check_hipDeviceSetLimit)(enum hipLimit_t, size_t) = hipDeviceSetLimit;
#endif

/* The values the launcher hard-codes. */
_Static_assert((long long)(hipSuccess) == 0LL, "hipSuccess == 0");
_Static_assert((long long)(hipErrorInvalidValue) == 1LL, "hipErrorInvalidValue == 1");
_Static_assert((long long)(hipErrorOutOfMemory) == 2LL, "hipErrorOutOfMemory == 2");
_Static_assert((long long)(hipErrorInsufficientDriver) == 35LL, "hipErrorInsufficientDriver == 35");
_Static_assert((long long)(hipErrorNoDevice) == 100LL, "hipErrorNoDevice == 100");
_Static_assert((long long)(hipErrorInvalidDevice) == 101LL, "hipErrorInvalidDevice == 101");
_Static_assert((long long)(hipErrorInvalidImage) == 200LL, "hipErrorInvalidImage == 200");
_Static_assert((long long)(hipErrorNoBinaryForGpu) == 209LL, "hipErrorNoBinaryForGpu == 209");
_Static_assert((long long)(hipErrorInvalidKernelFile) == 218LL, "hipErrorInvalidKernelFile == 218");
_Static_assert((long long)(hipErrorNotFound) == 500LL, "hipErrorNotFound == 500");
_Static_assert((long long)(hipErrorNotReady) == 600LL, "hipErrorNotReady == 600");
_Static_assert((long long)(hipErrorIllegalAddress) == 700LL, "hipErrorIllegalAddress == 700");
_Static_assert((long long)(hipErrorAssert) == 710LL, "hipErrorAssert == 710");
_Static_assert((long long)(hipErrorLaunchFailure) == 719LL, "hipErrorLaunchFailure == 719");
_Static_assert((long long)(hipDeviceAttributeMaxThreadsPerBlock) == 56LL, "hipDeviceAttributeMaxThreadsPerBlock == 56");
_Static_assert((long long)(hipDeviceAttributeMaxThreadsPerMultiProcessor) == 57LL, "hipDeviceAttributeMaxThreadsPerMultiProcessor == 57");
_Static_assert((long long)(hipDeviceAttributeMultiprocessorCount) == 63LL, "hipDeviceAttributeMultiprocessorCount == 63");
_Static_assert((long long)(hipDeviceAttributeWarpSize) == 87LL, "hipDeviceAttributeWarpSize == 87");
_Static_assert((long long)(HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK) == 0LL, "HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK == 0");
_Static_assert((long long)(HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES) == 3LL, "HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES == 3");
_Static_assert((long long)(HIP_FUNC_ATTRIBUTE_NUM_REGS) == 4LL, "HIP_FUNC_ATTRIBUTE_NUM_REGS == 4");
_Static_assert((long long)(hipHostMallocPortable) == 1LL, "hipHostMallocPortable == 1");
_Static_assert((long long)(hipHostMallocMapped) == 2LL, "hipHostMallocMapped == 2");
_Static_assert((long long)(hipHostMallocCoherent) == 1073741824LL, "hipHostMallocCoherent == 1073741824");
_Static_assert((long long)(hipStreamNonBlocking) == 1LL, "hipStreamNonBlocking == 1");
#if HIP_VERSION_MAJOR >= 6
_Static_assert((long long)(hipLimitStackSize) == 0LL, "hipLimitStackSize == 0");
#endif

/* Sizes of the types the Rust table passes by value. */
_Static_assert(sizeof(hipError_t) == sizeof(int), "sizeof(hipError_t)");
_Static_assert(sizeof(hipDeviceAttribute_t) == sizeof(int), "sizeof(hipDeviceAttribute_t)");
_Static_assert(sizeof(hipFunction_attribute) == sizeof(int), "sizeof(hipFunction_attribute)");
_Static_assert(sizeof(enum hipLimit_t) == sizeof(int), "sizeof(enum hipLimit_t)");
_Static_assert(sizeof(hipDevice_t) == sizeof(int), "sizeof(hipDevice_t)");
_Static_assert(sizeof(hipStream_t) == sizeof(void*), "sizeof(hipStream_t)");
_Static_assert(sizeof(hipModule_t) == sizeof(void*), "sizeof(hipModule_t)");
_Static_assert(sizeof(hipFunction_t) == sizeof(void*), "sizeof(hipFunction_t)");
_Static_assert(sizeof(hipDeviceptr_t) == sizeof(void*), "sizeof(hipDeviceptr_t)");

/* Where the arch name (gcnArchName) lies in the device properties, and that
 * the buffer HIP writes them into (result::PropBuffer) holds the struct. */
#if HIP_VERSION_MAJOR >= 6
_Static_assert(offsetof(hipDeviceProp_tR0600, gcnArchName) == 1160, "R0600 gcnArchName");
_Static_assert(sizeof(hipDeviceProp_tR0600) <= 8192, "R0600 fits the buffer");
#else
_Static_assert(offsetof(hipDeviceProp_t, gcnArchName) == 396, "R0000 gcnArchName");
_Static_assert(sizeof(hipDeviceProp_t) <= 8192, "R0000 fits the buffer");
#endif
