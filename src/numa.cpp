#include "tilecc/numa.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>

#include "tilecc/error.hpp"

namespace tilecc {

std::vector<int> NumaDomains::parse_cpulist(const std::string& text) {
  std::vector<int> cpus;
  std::size_t at = 0;
  auto number = [&] {
    TILECC_CHECK(at < text.size() && std::isdigit(static_cast<unsigned char>(text[at])), "'", text,
                 "' is not a CPU list (such as 0-3,8).");
    int n = 0;
    while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at])) && n < 1 << 20)
      n = n * 10 + (text[at++] - '0');
    return n;
  };
  while (at < text.size() && text[at] != '\n') {
    const int first = number();
    const int last = at < text.size() && text[at] == '-' ? (++at, number()) : first;
    TILECC_CHECK(last >= first, "'", text, "' is not a CPU list (such as 0-3,8).");
    for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
    if (at < text.size() && text[at] == ',') ++at;
  }
  return cpus;
}

const NumaDomains& NumaDomains::system() {
  static const NumaDomains domains = [] {
    NumaDomains found;
    std::map<int, std::vector<int>> by_node;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/sys/devices/system/node", ec)) {
      const std::string name = entry.path().filename().string();
      if (!name.starts_with("node") || name.size() == 4 ||
          !std::all_of(name.begin() + 4, name.end(), [](char c) { return c >= '0' && c <= '9'; }))
        continue;
      std::ifstream list(entry.path() / "cpulist");
      std::string text;
      std::getline(list, text);
      try {
        by_node[std::stoi(name.substr(4))] = parse_cpulist(text);
      } catch (const std::exception&) {
        by_node[std::stoi(name.substr(4))] = {};  // a domain whose CPUs cannot be read
      }
    }
    for (auto& [node, cpus] : by_node) found.cpus.push_back(std::move(cpus));
    return found;
  }();
  return domains;
}

int NumaDomains::group_size(int workers) const {
  const int domains = std::max(1, count());
  return std::max(1, (workers + domains - 1) / domains);
}

int NumaDomains::domain_of(int worker, int workers) const {
  return std::min(std::max(0, count() - 1), worker / group_size(workers));
}

}  // namespace tilecc
