import Foundation

/// Which of a store's files this process may not use, said plainly, for an open that failed.
///
/// LMDB reports a refused `open(2)` as its own failure, which the store reports as "not an
/// EventGraph store"; when the cause is a permission, the user needs to read which file and
/// what access (`permission denied on book.store/data.mdb (writing)`).
package enum StoreAccess {
  /// The first of the store's files that this process may not use as opening it needs.
  ///
  /// In order: the directory (searching it, or writing it to create `lock.mdb`), `lock.mdb` (read and
  /// written by every LMDB process, readers too), `data.mdb` (read, and written unless the
  /// store is opened read-only). Nil when each is usable, or when the path does not
  /// exist or holds no `data.mdb` (the open's own error says so).
  ///
  /// - Parameter writing: whether the store is opened for writing.
  package static func problem(at path: String, writing: Bool) -> String? {
    var isDirectory: ObjCBool = false
    let fm = FileManager.default
    guard fm.fileExists(atPath: path, isDirectory: &isDirectory) else {
      return "\(path) is not an EventGraph store: no such file or directory"
    }
    guard isDirectory.boolValue else { return nil }
    if !allowed(path, X_OK) { return "permission denied on \(path) (searching the directory)" }
    let data = path + "/data.mdb"
    let lock = path + "/lock.mdb"
    guard fm.fileExists(atPath: data) else { return nil }
    if !allowed(data, R_OK) { return "permission denied on \(data) (reading)" }
    if writing && !allowed(data, W_OK) { return "permission denied on \(data) (writing)" }
    if fm.fileExists(atPath: lock) {
      if !allowed(lock, R_OK | W_OK) { return "permission denied on \(lock) (reading and writing its reader table)" }
    } else if !allowed(path, W_OK) {
      return "permission denied on \(path) (writing the directory, to create lock.mdb)"
    }
    return nil
  }

  /// Whether this process (its effective user and groups) may access `path` as `mode` asks.
  private static func allowed(_ path: String, _ mode: Int32) -> Bool {
    faccessat(AT_FDCWD, path, mode, AT_EACCESS) == 0
  }
}
