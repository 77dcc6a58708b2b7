// A thin RAII layer over the SQLite C API for this folder: every failure
// becomes an sfc::Error that names the database file.
#pragma once
#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "sfc/error.hpp"

namespace sfc::sqlite {

// An SQLite failure; `code` is SQLite's extended result code.
class Failure : public Error {
 public:
  Failure(const std::string& what, int sqlite_code) : Error(what), code(sqlite_code) {}
  int code;
};

class Statement;

class Database {
 public:
  // flags: SQLITE_OPEN_READONLY, or SQLITE_OPEN_READWRITE [| SQLITE_OPEN_CREATE].
  // `immutable`: the file cannot change while open (it lies on a read-only
  // file system): SQLite then takes no locks and needs no -shm file.
  Database(const std::string& path, int flags, bool immutable = false);
  ~Database();
  Database(Database&& other) noexcept;
  Database& operator=(Database&& other) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  const std::string& path() const { return path_; }
  void exec(const char* sql);  // one or more statements, no results
  Statement prepare(std::string_view sql);
  void rollback() noexcept;  // undoes the open transaction, if any
  bool in_transaction() const { return sqlite3_get_autocommit(db_) == 0; }
  std::int64_t changes() const { return sqlite3_changes64(db_); }

  // Throws Failure("database <path>: <context>: <sqlite message>").
  [[noreturn]] void fail(int code, std::string_view context) const;

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

// A prepared statement; bind() indexes are 1-based, column() indexes 0-based.
class Statement {
 public:
  Statement(const Database& db, sqlite3_stmt* stmt) : db_(&db), stmt_(stmt) {}
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(Statement&& other) noexcept : db_(other.db_), stmt_(other.stmt_) { other.stmt_ = nullptr; }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement& operator=(Statement&&) = delete;

  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view value);

  bool step();   // true: a row is ready; false: done
  void run();    // steps a statement that returns no rows
  void reset();  // ready to bind and step again (bindings cleared)

  std::int64_t integer(int column) const { return sqlite3_column_int64(stmt_, column); }
  double real(int column) const { return sqlite3_column_double(stmt_, column); }
  std::string text(int column) const;
  bool is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

 private:
  void check_bind(int code);
  const Database* db_;
  sqlite3_stmt* stmt_;
};

// BEGIN IMMEDIATE ... COMMIT; rolls back if destroyed before commit(), so an
// exception anywhere inside leaves the database as it was.
class Transaction {
 public:
  explicit Transaction(Database& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Database& db_;
  bool open_ = true;
};

// BEGIN (deferred) ... ROLLBACK around reads: every statement inside sees one
// snapshot of the database, whatever other processes commit meanwhile. Inside
// a transaction already open it does nothing (that one is the snapshot).
class ReadTransaction {
 public:
  explicit ReadTransaction(Database& db);
  ~ReadTransaction();
  ReadTransaction(const ReadTransaction&) = delete;
  ReadTransaction& operator=(const ReadTransaction&) = delete;

 private:
  Database& db_;
  bool own_;
};

}  // namespace sfc::sqlite
