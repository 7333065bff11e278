/*
 * aco_report.c - compile SPIR-V compute shaders through a Vulkan driver
 * (intended: Mesa RADV "null" device, RADV_FORCE_FAMILY=navi21 etc.) and
 * print the driver's pipeline-executable statistics as TSV.
 *
 * Usage: aco_report [--entry NAME] [--header] [--family LABEL] file.spv...
 *
 * Descriptor set layouts are derived by reflecting the SPIR-V binary
 * (OpDecorate DescriptorSet/Binding + OpVariable storage class), so any
 * set/binding combination of storage buffers, uniform buffers, storage
 * images, samplers etc. is handled.
 *
 * Build: gcc -O2 -o aco_report aco_report.c -lvulkan
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

#define CHECK(x)                                                                 \
   do {                                                                          \
      VkResult r_ = (x);                                                         \
      if (r_ != VK_SUCCESS) {                                                    \
         fprintf(stderr, "%s:%d: %s failed: VkResult %d\n", __FILE__, __LINE__, #x, \
                 (int)r_);                                                       \
         exit(1);                                                                \
      }                                                                          \
   } while (0)

static uint32_t *read_file(const char *path, size_t *nwords)
{
   FILE *f = fopen(path, "rb");
   if (!f) return NULL;
   fseek(f, 0, SEEK_END);
   long n = ftell(f);
   fseek(f, 0, SEEK_SET);
   uint32_t *buf = malloc(n + 4);
   if (fread(buf, 1, n, f) != (size_t)n) { fclose(f); free(buf); return NULL; }
   fclose(f);
   *nwords = n / 4;
   return buf;
}

/* ---------- minimal SPIR-V reflection ---------- */
#define MAXB 64
struct binding { uint32_t set, binding; VkDescriptorType type; uint32_t count; };

struct reflect {
   struct binding b[MAXB];
   int nb;
   uint32_t local_size[3];
   int has_int64, has_int16, has_float64, has_float16, has_int8, has_atomic_int64;
};

static int reflect_spirv(const uint32_t *w, size_t n, struct reflect *out)
{
   memset(out, 0, sizeof(*out));
   if (n < 5 || w[0] != 0x07230203) return -1;
   uint32_t bound = w[3];
   int32_t *set = malloc(bound * 4), *bind = malloc(bound * 4);
   uint8_t *bufblock = calloc(bound, 1), *block = calloc(bound, 1);
   /* type info: for pointers: storage class + pointee; for arrays: elem; for images */
   uint32_t *ptr_sc = calloc(bound, 4), *ptr_to = calloc(bound, 4);
   uint32_t *arr_elem = calloc(bound, 4), *arr_len_id = calloc(bound, 4);
   uint32_t *kind = calloc(bound, 4); /* 1 struct 2 image 3 sampler 4 sampledimage 5 array 6 rtarray 7 accel 8 const */
   uint32_t *img_sampled = calloc(bound, 4), *img_dim = calloc(bound, 4);
   uint32_t *const_val = calloc(bound, 4);
   for (uint32_t i = 0; i < bound; i++) set[i] = bind[i] = -1;

   struct { uint32_t type, id, sc; } vars[1024];
   int nvars = 0;
   for (size_t i = 5; i < n;) {
      uint32_t op = w[i] & 0xffff, len = w[i] >> 16;
      if (len == 0) break;
      const uint32_t *a = &w[i + 1];
      switch (op) {
      case 17: /* OpCapability */
         if (a[0] == 11) out->has_int64 = 1;
         if (a[0] == 22) out->has_int16 = 1;
         if (a[0] == 10) out->has_float64 = 1;
         if (a[0] == 9) out->has_float16 = 1;
         if (a[0] == 39) out->has_int8 = 1;
         if (a[0] == 12) out->has_atomic_int64 = 1;
         break;
      case 16: /* OpExecutionMode */
         if (a[1] == 17 && len >= 6) { out->local_size[0] = a[2]; out->local_size[1] = a[3]; out->local_size[2] = a[4]; }
         break;
      case 71: /* OpDecorate */
         if (a[1] == 34) set[a[0]] = a[2];
         else if (a[1] == 33) bind[a[0]] = a[2];
         else if (a[1] == 3) bufblock[a[0]] = 1;
         else if (a[1] == 2) block[a[0]] = 1;
         break;
      case 30: kind[a[0]] = 1; break;                   /* OpTypeStruct */
      case 25: kind[a[0]] = 2; img_dim[a[0]] = a[2]; img_sampled[a[0]] = a[6]; break; /* OpTypeImage */
      case 26: kind[a[0]] = 3; break;                   /* OpTypeSampler */
      case 27: kind[a[0]] = 4; break;                   /* OpTypeSampledImage */
      case 28: kind[a[0]] = 5; arr_elem[a[0]] = a[1]; arr_len_id[a[0]] = a[2]; break;
      case 29: kind[a[0]] = 6; arr_elem[a[0]] = a[1]; break;
      case 5341: kind[a[0]] = 7; break;                 /* OpTypeAccelerationStructureKHR */
      case 43: kind[a[1]] = 8; const_val[a[1]] = a[2]; break; /* OpConstant */
      case 32: ptr_sc[a[0]] = a[1]; ptr_to[a[0]] = a[2]; break; /* OpTypePointer */
      case 59: /* OpVariable */
         if (nvars < 1024) { vars[nvars].type = a[0]; vars[nvars].id = a[1]; vars[nvars].sc = a[2]; nvars++; }
         break;
      }
      i += len;
   }
   for (int v = 0; v < nvars; v++) {
      uint32_t id = vars[v].id;
      if (set[id] < 0 || bind[id] < 0) continue;
      uint32_t sc = vars[v].sc;
      uint32_t t = ptr_to[vars[v].type];
      uint32_t count = 1;
      while (kind[t] == 5 || kind[t] == 6) {
         if (kind[t] == 5) count *= kind[arr_len_id[t]] == 8 ? const_val[arr_len_id[t]] : 1;
         t = arr_elem[t];
      }
      VkDescriptorType dt;
      if (sc == 12) dt = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      else if (sc == 2) dt = bufblock[t] ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER : VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
      else if (sc == 0) { /* UniformConstant */
         if (kind[t] == 3) dt = VK_DESCRIPTOR_TYPE_SAMPLER;
         else if (kind[t] == 4) dt = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
         else if (kind[t] == 7) dt = VK_DESCRIPTOR_TYPE_ACCELERATION_STRUCTURE_KHR;
         else if (kind[t] == 2) {
            int buf = img_dim[t] == 5; /* Buffer */
            if (img_sampled[t] == 2) dt = buf ? VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER : VK_DESCRIPTOR_TYPE_STORAGE_IMAGE;
            else dt = buf ? VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER : VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE;
         } else continue;
      } else continue;
      if (out->nb < MAXB) {
         out->b[out->nb].set = set[id];
         out->b[out->nb].binding = bind[id];
         out->b[out->nb].type = dt;
         out->b[out->nb].count = count ? count : 1;
         out->nb++;
      }
   }
   free(set); free(bind); free(bufblock); free(block); free(ptr_sc); free(ptr_to);
   free(arr_elem); free(arr_len_id); free(kind); free(img_sampled); free(img_dim); free(const_val);
   return 0;
}

/* ---------- statistics ---------- */
#define MAXSTAT 64
struct statcol { char name[VK_MAX_DESCRIPTION_SIZE]; };
static struct statcol cols[MAXSTAT];
static int ncols = 0;

static int col_index(const char *name)
{
   for (int i = 0; i < ncols; i++)
      if (!strcmp(cols[i].name, name)) return i;
   if (ncols == MAXSTAT) return -1;
   snprintf(cols[ncols].name, sizeof(cols[ncols].name), "%s", name);
   return ncols++;
}

static void stat_to_str(const VkPipelineExecutableStatisticKHR *s, char *buf, size_t n)
{
   switch (s->format) {
   case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: snprintf(buf, n, "%u", s->value.b32); break;
   case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: snprintf(buf, n, "%lld", (long long)s->value.i64); break;
   case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: snprintf(buf, n, "%llu", (unsigned long long)s->value.u64); break;
   case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR: snprintf(buf, n, "%g", s->value.f64); break;
   default: snprintf(buf, n, "?");
   }
}

static int has_ext(VkPhysicalDevice pd, const char *name)
{
   uint32_t n = 0;
   vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL);
   VkExtensionProperties *e = calloc(n, sizeof(*e));
   vkEnumerateDeviceExtensionProperties(pd, NULL, &n, e);
   int found = 0;
   for (uint32_t i = 0; i < n; i++)
      if (!strcmp(e[i].extensionName, name)) found = 1;
   free(e);
   return found;
}

int main(int argc, char **argv)
{
   const char *entry = "main";
   const char *family = NULL;
   int header = 0, dump_ir = 0;
   int first = 1;
   for (; first < argc && argv[first][0] == '-' && argv[first][1] == '-'; first++) {
      if (!strcmp(argv[first], "--entry") && first + 1 < argc) entry = argv[++first];
      else if (!strcmp(argv[first], "--family") && first + 1 < argc) family = argv[++first];
      else if (!strcmp(argv[first], "--header")) header = 1;
      else if (!strcmp(argv[first], "--ir")) dump_ir = 1;
      else { fprintf(stderr, "unknown option %s\n", argv[first]); return 2; }
   }
   if (!family) family = getenv("RADV_FORCE_FAMILY") ? getenv("RADV_FORCE_FAMILY") : "native";

   VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
   app.pApplicationName = "aco_report";
   app.apiVersion = VK_API_VERSION_1_1;
   VkInstanceCreateInfo ici = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
   ici.pApplicationInfo = &app;
   VkInstance inst;
   CHECK(vkCreateInstance(&ici, NULL, &inst));

   uint32_t npd = 0;
   CHECK(vkEnumeratePhysicalDevices(inst, &npd, NULL));
   if (!npd) { fprintf(stderr, "no Vulkan physical devices\n"); return 1; }
   VkPhysicalDevice *pds = calloc(npd, sizeof(*pds));
   CHECK(vkEnumeratePhysicalDevices(inst, &npd, pds));
   VkPhysicalDevice pd = VK_NULL_HANDLE;
   VkPhysicalDeviceProperties props;
   for (uint32_t i = 0; i < npd; i++) {
      vkGetPhysicalDeviceProperties(pds[i], &props);
      fprintf(stderr, "physical device %u: %s (vendor 0x%x, api %u.%u.%u, driver 0x%x)\n", i,
              props.deviceName, props.vendorID, VK_VERSION_MAJOR(props.apiVersion),
              VK_VERSION_MINOR(props.apiVersion), VK_VERSION_PATCH(props.apiVersion),
              props.driverVersion);
      if (pd == VK_NULL_HANDLE && (props.vendorID == 0x1002 || strstr(props.deviceName, "RADV")))
         pd = pds[i];
   }
   if (pd == VK_NULL_HANDLE) {
      fprintf(stderr, "no RADV/AMD device found, using device 0\n");
      pd = pds[0];
   }
   vkGetPhysicalDeviceProperties(pd, &props);

   uint32_t nqf = 0;
   vkGetPhysicalDeviceQueueFamilyProperties(pd, &nqf, NULL);
   VkQueueFamilyProperties *qfs = calloc(nqf, sizeof(*qfs));
   vkGetPhysicalDeviceQueueFamilyProperties(pd, &nqf, qfs);
   int qf = -1;
   for (uint32_t i = 0; i < nqf; i++) {
      fprintf(stderr, "queue family %u: flags 0x%x count %u\n", i, qfs[i].queueFlags, qfs[i].queueCount);
      if (qf < 0 && (qfs[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) qf = i;
   }
   if (qf < 0) { fprintf(stderr, "no compute queue family\n"); return 1; }
   if (getenv("ACO_REPORT_QF")) qf = atoi(getenv("ACO_REPORT_QF"));

   /* reflect all inputs first to learn which features are needed */
   int need_i64 = 0, need_i16 = 0, need_f64 = 0;
   for (int i = first; i < argc; i++) {
      size_t nw; uint32_t *code = read_file(argv[i], &nw);
      if (!code) continue;
      struct reflect r;
      if (!reflect_spirv(code, nw, &r)) {
         need_i64 |= r.has_int64; need_i16 |= r.has_int16; need_f64 |= r.has_float64;
      }
      free(code);
   }

   VkPhysicalDeviceFeatures supported;
   vkGetPhysicalDeviceFeatures(pd, &supported);
   VkPhysicalDeviceFeatures feats = {0};
   if (need_i64 && supported.shaderInt64) feats.shaderInt64 = VK_TRUE;
   if (need_i16 && supported.shaderInt16) feats.shaderInt16 = VK_TRUE;
   if (need_f64 && supported.shaderFloat64) feats.shaderFloat64 = VK_TRUE;

   int have_pexec = has_ext(pd, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
   const char *exts[2];
   uint32_t nexts = 0;
   VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pexf = {
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
   if (have_pexec) {
      exts[nexts++] = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
      pexf.pipelineExecutableInfo = VK_TRUE;
   } else {
      fprintf(stderr, "warning: device lacks VK_KHR_pipeline_executable_properties\n");
   }

   float prio = 1.0f;
   VkDeviceQueueCreateInfo qci = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
   qci.queueFamilyIndex = qf;
   qci.queueCount = 1;
   qci.pQueuePriorities = &prio;
   VkDeviceCreateInfo dci = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
   dci.pNext = have_pexec ? &pexf : NULL;
   dci.queueCreateInfoCount = getenv("ACO_REPORT_NOQUEUE") ? 0 : 1;
   dci.pQueueCreateInfos = &qci;
   dci.enabledExtensionCount = nexts;
   dci.ppEnabledExtensionNames = exts;
   dci.pEnabledFeatures = &feats;
   VkDevice dev;
   fprintf(stderr, "creating device on '%s', queue family %d, pipeline_executable_properties=%d\n",
           props.deviceName, qf, have_pexec);
   CHECK(vkCreateDevice(pd, &dci, NULL, &dev));

   PFN_vkGetPipelineExecutablePropertiesKHR getExecProps =
      (PFN_vkGetPipelineExecutablePropertiesKHR)vkGetDeviceProcAddr(dev, "vkGetPipelineExecutablePropertiesKHR");
   PFN_vkGetPipelineExecutableStatisticsKHR getExecStats =
      (PFN_vkGetPipelineExecutableStatisticsKHR)vkGetDeviceProcAddr(dev, "vkGetPipelineExecutableStatisticsKHR");
   PFN_vkGetPipelineExecutableInternalRepresentationsKHR getExecIR =
      (PFN_vkGetPipelineExecutableInternalRepresentationsKHR)vkGetDeviceProcAddr(
         dev, "vkGetPipelineExecutableInternalRepresentationsKHR");

   /* rows are buffered so the header can list every statistic name seen */
   int nfiles = argc - first;
   char ***vals = calloc(nfiles, sizeof(char **));
   char **status = calloc(nfiles, sizeof(char *));
   int failures = 0;

   for (int fi = 0; fi < nfiles; fi++) {
      const char *path = argv[first + fi];
      vals[fi] = calloc(MAXSTAT, sizeof(char *));
      size_t nw;
      uint32_t *code = read_file(path, &nw);
      if (!code) { status[fi] = "read-error"; failures++; continue; }
      struct reflect r;
      if (reflect_spirv(code, nw, &r)) { status[fi] = "not-spirv"; failures++; free(code); continue; }
      {
         int c = col_index("workgroup_size");
         if (c >= 0) { vals[fi][c] = malloc(48); snprintf(vals[fi][c], 48, "%u,%u,%u", r.local_size[0], r.local_size[1], r.local_size[2]); }
      }

      uint32_t maxset = 0;
      for (int b = 0; b < r.nb; b++) if (r.b[b].set + 1 > maxset) maxset = r.b[b].set + 1;
      VkDescriptorSetLayout dsl[8] = {0};
      if (maxset > 8) maxset = 8;
      for (uint32_t s = 0; s < maxset; s++) {
         VkDescriptorSetLayoutBinding lb[MAXB];
         uint32_t nlb = 0;
         for (int b = 0; b < r.nb; b++) {
            if (r.b[b].set != s) continue;
            /* merge duplicates (same binding declared twice) */
            int dup = 0;
            for (uint32_t k = 0; k < nlb; k++) if (lb[k].binding == r.b[b].binding) dup = 1;
            if (dup) continue;
            memset(&lb[nlb], 0, sizeof(lb[nlb]));
            lb[nlb].binding = r.b[b].binding;
            lb[nlb].descriptorType = r.b[b].type;
            lb[nlb].descriptorCount = r.b[b].count;
            lb[nlb].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
            nlb++;
         }
         VkDescriptorSetLayoutCreateInfo dslci = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
         dslci.bindingCount = nlb;
         dslci.pBindings = lb;
         CHECK(vkCreateDescriptorSetLayout(dev, &dslci, NULL, &dsl[s]));
      }
      VkPipelineLayoutCreateInfo plci = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
      plci.setLayoutCount = maxset;
      plci.pSetLayouts = dsl;
      VkPipelineLayout pl;
      CHECK(vkCreatePipelineLayout(dev, &plci, NULL, &pl));

      VkShaderModuleCreateInfo smci = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
      smci.codeSize = nw * 4;
      smci.pCode = code;
      VkShaderModule sm;
      CHECK(vkCreateShaderModule(dev, &smci, NULL, &sm));

      VkComputePipelineCreateInfo cpci = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
      cpci.flags = have_pexec ? (VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR |
                                 (dump_ir ? VK_PIPELINE_CREATE_CAPTURE_INTERNAL_REPRESENTATIONS_BIT_KHR : 0))
                              : 0;
      cpci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
      cpci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
      cpci.stage.module = sm;
      cpci.stage.pName = entry;
      cpci.layout = pl;
      VkPipeline pipe;
      fprintf(stderr, "compiling %s\n", path);
      VkResult res = vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cpci, NULL, &pipe);
      if (res != VK_SUCCESS) {
         char *s = malloc(64);
         snprintf(s, 64, "pipeline-error-%d", (int)res);
         status[fi] = s;
         failures++;
      } else {
         status[fi] = "ok";
         if (have_pexec && getExecProps && getExecStats) {
            VkPipelineInfoKHR pinfo = {VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
            pinfo.pipeline = pipe;
            uint32_t nexec = 0;
            CHECK(getExecProps(dev, &pinfo, &nexec, NULL));
            VkPipelineExecutablePropertiesKHR ep[4];
            for (int k = 0; k < 4; k++) { memset(&ep[k], 0, sizeof(ep[k])); ep[k].sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR; }
            if (nexec > 4) nexec = 4;
            CHECK(getExecProps(dev, &pinfo, &nexec, ep));
            for (uint32_t e = 0; e < nexec && e < 1; e++) {
               VkPipelineExecutableInfoKHR einfo = {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
               einfo.pipeline = pipe;
               einfo.executableIndex = e;
               int c = col_index("subgroup_size");
               if (c >= 0) { vals[fi][c] = malloc(16); snprintf(vals[fi][c], 16, "%u", ep[e].subgroupSize); }
               uint32_t ns = 0;
               CHECK(getExecStats(dev, &einfo, &ns, NULL));
               VkPipelineExecutableStatisticKHR *st = calloc(ns, sizeof(*st));
               for (uint32_t k = 0; k < ns; k++) st[k].sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR;
               CHECK(getExecStats(dev, &einfo, &ns, st));
               for (uint32_t k = 0; k < ns; k++) {
                  c = col_index(st[k].name);
                  if (c < 0) continue;
                  vals[fi][c] = malloc(64);
                  stat_to_str(&st[k], vals[fi][c], 64);
               }
               free(st);
               if (dump_ir && getExecIR) {
                  uint32_t nir = 0;
                  getExecIR(dev, &einfo, &nir, NULL);
                  VkPipelineExecutableInternalRepresentationKHR *ir = calloc(nir, sizeof(*ir));
                  for (uint32_t k = 0; k < nir; k++) ir[k].sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INTERNAL_REPRESENTATION_KHR;
                  getExecIR(dev, &einfo, &nir, ir);
                  for (uint32_t k = 0; k < nir; k++) { ir[k].pData = malloc(ir[k].dataSize); }
                  getExecIR(dev, &einfo, &nir, ir);
                  for (uint32_t k = 0; k < nir; k++) {
                     fprintf(stderr, "==== %s: %s (%s) ====\n", path, ir[k].name, ir[k].description);
                     if (ir[k].isText) fprintf(stderr, "%s\n", (char *)ir[k].pData);
                     free(ir[k].pData);
                  }
                  free(ir);
               }
            }
         }
         vkDestroyPipeline(dev, pipe, NULL);
      }
      vkDestroyShaderModule(dev, sm, NULL);
      vkDestroyPipelineLayout(dev, pl, NULL);
      for (uint32_t s = 0; s < maxset; s++) vkDestroyDescriptorSetLayout(dev, dsl[s], NULL);
      free(code);
   }

   if (header) {
      printf("kernel\tfamily\tdevice\tstatus");
      for (int c = 0; c < ncols; c++) printf("\t%s", cols[c].name);
      printf("\n");
   }
   for (int fi = 0; fi < nfiles; fi++) {
      const char *path = argv[first + fi];
      const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
      printf("%s\t%s\t%s\t%s", base, family, props.deviceName, status[fi]);
      for (int c = 0; c < ncols; c++) printf("\t%s", vals[fi][c] ? vals[fi][c] : "");
      printf("\n");
   }
   vkDestroyDevice(dev, NULL);
   vkDestroyInstance(inst, NULL);
   return failures ? 3 : 0;
}
