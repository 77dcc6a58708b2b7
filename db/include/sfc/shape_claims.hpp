// ShapeClaims: which tuner is measuring which shape of a database right now.
//
// Tuners sharing a database (a Slurm array on one node, a few terminals) claim
// a shape before measuring it and measure only what the database lacks once
// they hold the claim, so no configuration is measured twice. A claim is an
// open-file-description lock on one byte of "<database>-claims", placed by a
// hash of the shape's key: the kernel drops it when its tuner ends in any way,
// kill -9 included, so no claim outlives its holder and none needs cleaning.
// (SQLite's WAL already requires every process of a database to share one
// machine, which is also the reach of these locks.) The file stays next to
// its database: removing it while another tuner holds it open would let two
// claims files, and so two claims on one shape, exist at once.
//
//   sfc::ShapeClaims claims(store.path());
//   if (auto claim = claims.try_claim(key)) { ...measure, record... }   // released at scope end
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sfc {

class ShapeClaims {
 public:
  // Opens (creating) the claims file next to `database_path`; throws
  // sfc::Error naming it when that is impossible. The last ShapeClaims of
  // the file to be destroyed, in any process, removes it.
  explicit ShapeClaims(const std::string& database_path);
  ~ShapeClaims();
  ShapeClaims(const ShapeClaims&) = delete;
  ShapeClaims& operator=(const ShapeClaims&) = delete;

  class Claim {
   public:
    Claim(Claim&& other) noexcept : fd_(other.fd_), offset_(other.offset_) { other.fd_ = -1; }
    Claim& operator=(Claim&&) = delete;
    Claim(const Claim&) = delete;
    ~Claim();

   private:
    friend class ShapeClaims;
    Claim(int fd, std::int64_t offset) : fd_(fd), offset_(offset) {}
    int fd_;
    std::int64_t offset_;
  };

  // The claim of `key` (any text naming a shape uniquely), or nothing while
  // another process holds it. Never waits.
  std::optional<Claim> try_claim(std::string_view key);

 private:
  int fd_ = -1;
  std::string path_;
  int owner_ = 0;  // the process that opened it (getpid())
};

}  // namespace sfc
