// Runs NCCL's own topology XML loader on a file, without GPUs: ncclTopoGetXmlFromFile, then the attributes
// NCCL's detection would add (ncclTopoFillGpu: <gpu rank dev sm gdr>; ncclTopoFillNet: net dev and gdr), then
// ncclTopoGetSystemFromXml and NCCL's path search (paths.cc, included for its static ncclTopoSetPaths).
// Prints the loaded tree and, per GPU, the path type to every NIC with whether GPUDirect RDMA is on at
// $NCCL_NET_GDR_LEVEL, the NICs NCCL counts as local, and the NIC it takes on channel 0. GPUs are numbered
// (CUDA dev and rank) in file order, NICs (net dev) in file order. Exit 1 when the loader refuses the file;
// NCCL's WARN and INFO lines go to stderr.
#include "paths.cc"

static ncclResult_t fillLikeNccl(struct ncclXml* xml, int sm) {
  int gpus = 0, nets = 0;
  for (int i = 0; i < xml->maxIndex; i++) {
    struct ncclXmlNode* node = xml->nodes + i;
    if (strcmp(node->name, "pci") == 0) {
      const char* cls;
      NCCLCHECK(xmlGetAttr(node, "class", &cls));
      if (cls && strncmp(cls, "0x03", 4) == 0) {
        struct ncclXmlNode* gpu;
        NCCLCHECK(xmlAddNode(xml, node, "gpu", &gpu));
        NCCLCHECK(xmlSetAttrInt(gpu, "dev", gpus));
        NCCLCHECK(xmlSetAttrInt(gpu, "rank", gpus));
        NCCLCHECK(xmlSetAttrInt(gpu, "sm", sm));
        NCCLCHECK(xmlSetAttrInt(gpu, "gdr", 1));
        gpus++;
      }
    } else if (strcmp(node->name, "net") == 0) {
      NCCLCHECK(xmlSetAttrInt(node, "dev", nets++));
      NCCLCHECK(xmlSetAttrInt(node, "gdr", 1));
    }
  }
  return ncclSuccess;
}

static const char* busIdOf(struct ncclXmlNode* node) {
  while (node && strcmp(node->name, "pci") != 0) node = node->parent;
  const char* busId = NULL;
  if (node) xmlGetAttr(node, "busid", &busId);
  return busId ? busId : "?";
}

static void printTree(struct ncclXmlNode* node, int depth) {
  if (strcmp(node->name, "cpu") == 0 || strcmp(node->name, "pci") == 0 || strcmp(node->name, "net") == 0) {
    const char* key = strcmp(node->name, "cpu") == 0 ? "numaid" : strcmp(node->name, "pci") == 0 ? "busid" : "name";
    const char* value = NULL;
    xmlGetAttr(node, key, &value);
    printf("tree %d %s %s\n", depth, node->name, value ? value : "?");
  }
  for (int s = 0; s < node->nSubs; s++) printTree(node->subs[s], depth + 1);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s topo.xml sm\n", argv[0]);
    return 2;
  }
  struct ncclXml* xml;
  struct ncclTopoSystem* system;
  if (xmlAlloc(&xml, NCCL_TOPO_XML_MAX_NODES) != ncclSuccess) return 1;
  if (ncclTopoGetXmlFromFile(argv[1], xml, 1) != ncclSuccess) return 1;
  struct ncclXmlNode* top;
  if (xmlFindTag(xml, "system", &top) != ncclSuccess || top == NULL) {
    fprintf(stderr, "no <system> element loaded\n");
    return 1;
  }
  printTree(top, 0);
  if (fillLikeNccl(xml, atoi(argv[2])) != ncclSuccess) return 1;
  if (ncclTopoGetSystemFromXml(xml, &system, 0) != ncclSuccess) return 1;
  for (int c = 0; c < system->nodes[CPU].count; c++) ncclTopoSetPaths(system->nodes[CPU].nodes + c, system);
  for (int n = 0; n < system->nodes[NET].count; n++) ncclTopoSetPaths(system->nodes[NET].nodes + n, system);
  for (int g = 0; g < system->nodes[GPU].count; g++) ncclTopoSetPaths(system->nodes[GPU].nodes + g, system);

  // NET dev index -> the name of its <net> in the file, and GPU rank -> its bus id
  const char* netName[NCCL_TOPO_MAX_NODES] = {0};
  const char* gpuBus[NCCL_TOPO_MAX_NODES] = {0};
  for (int i = 0; i < xml->maxIndex; i++) {
    struct ncclXmlNode* node = xml->nodes + i;
    int value;
    if (strcmp(node->name, "net") == 0 && xmlGetAttrInt(node, "dev", &value) == ncclSuccess) xmlGetAttr(node, "name", netName + value);
    if (strcmp(node->name, "gpu") == 0 && xmlGetAttrInt(node, "rank", &value) == ncclSuccess) gpuBus[value] = busIdOf(node);
  }
  printf("counts gpu %d nic %d net %d pci %d cpu %d\n", system->nodes[GPU].count, system->nodes[NIC].count,
         system->nodes[NET].count, system->nodes[PCI].count, system->nodes[CPU].count);
  for (int g = 0; g < system->nodes[GPU].count; g++) {
    struct ncclTopoNode* gpu = system->nodes[GPU].nodes + g;
    for (int n = 0; n < system->nodes[NET].count; n++) {
      struct ncclTopoNode* net = system->nodes[NET].nodes + n;
      enum ncclTopoGdrMode gdr;
      if (ncclTopoCheckGdr(system, gpu->gpu.rank, net->id, 0, &gdr) != ncclSuccess) return 1;
      printf("path %s %s %s %.1f gdr %d\n", gpuBus[gpu->gpu.rank], netName[net->net.dev],
             topoPathTypeStr[gpu->paths[NET][n].type], gpu->paths[NET][n].bw, gdr != ncclTopoGdrModeDisable);
    }
    int locals[NCCL_TOPO_MAX_NODES], count;
    if (ncclTopoGetLocal(system, GPU, g, NET, locals, &count, NULL) != ncclSuccess) return 1;
    printf("local %s", gpuBus[gpu->gpu.rank]);
    for (int l = 0; l < count; l++) printf(" %s", netName[system->nodes[NET].nodes[locals[l]].net.dev]);
    printf("\n");
    int dev;
    if (ncclTopoGetLocalNet(system, gpu->gpu.rank, 0, NULL, &dev) != ncclSuccess) return 1;
    printf("channel0 %s %s\n", gpuBus[gpu->gpu.rank], netName[dev]);
  }
  return 0;
}
