/// One meta page's view of a data file, read without LMDB.
///
/// The databases and their entries in key order, each page checked as ``PageCheck``
/// checks it. What a damaged file still
/// holds can be read up to the first damaged page of a tree (salvage).
public struct FileSnapshot {
  public let meta: MetaPage
  let file: PageFile

  /// A view of each meta page that is intact, the newest first.
  public static func all(dataFile: String) throws -> [FileSnapshot] {
    let file = try PageFile(path: dataFile)
    let metas = file.metas().compactMap { try? $0.get() }.sorted { $0.transaction > $1.transaction }
    return metas.map { FileSnapshot(meta: $0, file: file) }
  }

  /// The named databases, with the entry counts their records give.
  public func databases() throws -> [String: UInt64] {
    var result: [String: UInt64] = [:]
    for (name, root) in try namedRoots() { result[name] = root.entries }
    return result
  }

  private func namedRoots() throws -> [String: TreeRoot] {
    var walk = Walk(file: file, meta: meta)
    var roots: [String: TreeRoot] = [:]
    try walk.walk(meta.main, name: "(main)") { key, value, flags in
      guard flags & PageCheck.subData != 0, value.count == 48,
        let root = TreeRoot(PageBytes(bytes: Array(value)), at: 0)
      else { return }
      roots[String(decoding: key, as: UTF8.self)] = root
    }
    return roots
  }

  /// Visits the entries of database `name` in key order until `visit` returns false.
  ///
  /// - Throws: ``FileDamage`` at the first damaged page, after visiting every entry before it.
  public func entries(of name: String, _ visit: ([UInt8], [UInt8]) throws -> Bool) throws {
    guard let root = try namedRoots()[name] else { return }
    var walk = Walk(file: file, meta: meta)
    do {
      try walk.walk(root, name: name) { key, value, _ in
        if try !visit(Array(key), Array(value)) { throw StopWalk() }
      }
    } catch is StopWalk {
      return
    }
  }
}

/// Ends a walk early: the visitor has what it wanted.
private struct StopWalk: Error {}
