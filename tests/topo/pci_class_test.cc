#include "topo/pci_class.h"

#include <gtest/gtest.h>

namespace plumb::topo {
namespace {

TEST(PciClass, AcceleratorsByVendorAndClass) {
  EXPECT_EQ(classify_pci(0x10de, 0x0302, false), PciKind::kAccelerator);  // H100, A100
  EXPECT_EQ(classify_pci(0x10de, 0x0300, false), PciKind::kAccelerator);  // VGA-class GPU
  EXPECT_EQ(classify_pci(0x19e5, 0x1200, false), PciKind::kAccelerator);  // Ascend 910B
  // The class alone is not enough: a BMC's VGA and another vendor's accelerator are not counted.
  EXPECT_EQ(classify_pci(0x1a03, 0x0300, false), PciKind::kOther);
  EXPECT_EQ(classify_pci(0x1234, 0x1200, false), PciKind::kOther);
  EXPECT_EQ(classify_pci(0x10de, 0x0680, false), PciKind::kOther);  // NVSwitch bridge
}

TEST(PciClass, NicsWithAndWithoutRdma) {
  EXPECT_EQ(classify_pci(0x15b3, 0x0207, false), PciKind::kRdmaNic);  // ConnectX, InfiniBand
  EXPECT_EQ(classify_pci(0x15b3, 0x0c06, false), PciKind::kRdmaNic);  // older HCA class
  EXPECT_EQ(classify_pci(0x15b3, 0x0200, true), PciKind::kRdmaNic);   // RoCE port with mlx5_N
  EXPECT_EQ(classify_pci(0x8086, 0x0200, false), PciKind::kNic);
  EXPECT_EQ(classify_pci(0x19e5, 0x0200, false), PciKind::kNic);  // Huawei NIC, not an NPU
  EXPECT_EQ(classify_pci(0x1af4, 0x0200, false), PciKind::kNic);  // virtio-net
}

TEST(PciClass, NvmeAndTheRest) {
  EXPECT_EQ(classify_pci(0x144d, 0x0108, false), PciKind::kNvme);
  EXPECT_EQ(classify_pci(0x1af4, 0x0180, false), PciKind::kOther);  // virtio-blk
  // An OpenFabrics device upgrades only a network controller.
  EXPECT_EQ(classify_pci(0x144d, 0x0108, true), PciKind::kNvme);
}

TEST(PciClass, NamesAndTable) {
  EXPECT_EQ(kind_name(PciKind::kAccelerator), "accelerator");
  EXPECT_EQ(kind_name(PciKind::kRdmaNic), "rdma-nic");
  EXPECT_EQ(kind_name(PciKind::kNic), "nic");
  EXPECT_EQ(kind_name(PciKind::kNvme), "nvme");
  EXPECT_EQ(kind_name(PciKind::kOther), "other");
  EXPECT_EQ(vendor_name(0x10de), "NVIDIA");
  EXPECT_EQ(vendor_name(0x19e5), "Huawei");
  EXPECT_EQ(vendor_name(0x15b3), "Mellanox");
  EXPECT_EQ(vendor_name(0xffff), "");
  EXPECT_EQ(pci_rules().size(), 7u);
}

}  // namespace
}  // namespace plumb::topo
