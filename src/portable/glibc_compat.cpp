// Two functions that the static libstdc++ and libgcc of GCC 12 (Debian 12) call and that glibc only added
// after 2.34, defined here so that gpusage-portable's newest GLIBC_ symbol stays at its floor
// (GPUSAGE_GLIBC_FLOOR, checked by tests/portable). The executable's own definitions bind those calls at link
// time; glibc's are left to everything else in the process.
//   arc4random       GLIBC_2.36, called by std::random_device (libstdc++'s random.o)
//   _dl_find_object  GLIBC_2.35, called by the unwinder to find an address's unwind tables
//                    (libgcc_eh's unwind-dw2-fde-dip.o); GCC before 12 walked dl_iterate_phdr instead,
//                    which is what this does
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/random.h>

#include <cerrno>
#include <cstdint>

extern "C" {

// getrandom(2) (glibc 2.25, Linux 3.17): the kernel's CSPRNG, as glibc 2.36's arc4random uses it.
std::uint32_t arc4random() {
  std::uint32_t value = 0;
  while (::getrandom(&value, sizeof value, 0) != static_cast<ssize_t>(sizeof value)) {
    // EINTR only: a 4-byte request never returns short once the pool is initialised.
  }
  return value;
}

namespace {

struct FindObject {
  std::uintptr_t address = 0;
  dl_find_object* result = nullptr;
  bool found = false;
};

// For the loaded object whose PT_LOAD segments hold the address: its mapped range and its PT_GNU_EH_FRAME
// segment (.eh_frame_hdr), which is what glibc's _dl_find_object reports as dlfo_eh_frame.
int match_object(dl_phdr_info* info, std::size_t /*size*/, void* data) {
  auto* find = static_cast<FindObject*>(data);
  std::uintptr_t low = UINTPTR_MAX;
  std::uintptr_t high = 0;
  bool contains = false;
  void* eh_frame = nullptr;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& phdr = info->dlpi_phdr[i];
    const std::uintptr_t start = info->dlpi_addr + phdr.p_vaddr;
    if (phdr.p_type == PT_LOAD) {
      const std::uintptr_t end = start + phdr.p_memsz;
      if (start < low) low = start;
      if (end > high) high = end;
      if (find->address >= start && find->address < end) contains = true;
    } else if (phdr.p_type == PT_GNU_EH_FRAME) {
      eh_frame = reinterpret_cast<void*>(start);
    }
  }
  if (!contains) return 0;
  *find->result = {};
  find->result->dlfo_map_start = reinterpret_cast<void*>(low);
  find->result->dlfo_map_end = reinterpret_cast<void*>(high);
  find->result->dlfo_eh_frame = eh_frame;
  find->found = true;
  return 1;
}

}  // namespace

int _dl_find_object(void* address, dl_find_object* result) noexcept {
  FindObject find{reinterpret_cast<std::uintptr_t>(address), result, false};
  ::dl_iterate_phdr(match_object, &find);
  return find.found ? 0 : -1;
}

}  // extern "C"
