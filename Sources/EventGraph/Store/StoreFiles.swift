import Foundation

/// A store's directory and files are its owner's alone.
///
/// The directory mode 0700, the files 0600, as PostgreSQL insists on for its data
/// directory. Whoever else can read them reads
/// every value that is not personal, and the history of each.
enum StoreFiles {
  static let directoryMode: mode_t = 0o700
  static let fileMode: mode_t = 0o600

  /// Makes `path` a directory only its owner may enter, creating it (with its parents when
  /// `intermediate`) when it is missing; the mode is set after, whatever the umask.
  static func makePrivateDirectory(_ path: String, intermediate: Bool = false) throws {
    var isDirectory: ObjCBool = false
    if !FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
      try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: intermediate)
    }
    guard chmod(path, directoryMode) == 0 else {
      throw MaintenanceError("cannot make \(path) its owner's alone (mode 0700): \(String(cString: strerror(errno)))")
    }
  }

  /// What of the store at `path` others may read, enter or write, a sentence each: the
  /// directory when its mode gives the group or others anything, and each file in it.
  static func openToOthers(at path: String) -> [String] {
    var found: [String] = []
    func check(_ item: String, _ owners: mode_t, _ what: String) {
      var st = stat()
      guard lstat(item, &st) == 0, st.st_mode & 0o077 != 0 else { return }
      let mode = String(st.st_mode & 0o777, radix: 8)
      found.append(
        "\(item) is open to others (mode \(mode)): a store's \(what) should be its owner's alone (\(String(owners, radix: 8)))"
      )
    }
    check(path, directoryMode, "directory")
    let names = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    for name in names {
      var isDirectory: ObjCBool = false
      let item = path + "/" + name
      guard FileManager.default.fileExists(atPath: item, isDirectory: &isDirectory), !isDirectory.boolValue else {
        continue
      }
      check(item, fileMode, "files")
    }
    return found
  }
}
