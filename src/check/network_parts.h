// The rows of network_checks() that live in files of their own (docs/check.md).
#pragma once

#include "check/check.h"

namespace plumb::check {

CheckSpec net_ports_check();  // network_checks.cc
CheckSpec net_roce_check();   // roce_check.cc
CheckSpec nic_irq_check();    // nic_irq_check.cc

}  // namespace plumb::check
