import Foundation

/// A check of an LMDB data file made with ordinary reads, never through the memory map, so
/// that damage is reported instead of faulting the process.
///
/// LMDB trusts its file: a page number, a node offset or a length read from a damaged page
/// is followed as it is, and a read past the end of a truncated file is a SIGBUS. This check
/// reads both meta pages, checks the file's length against the one LMDB would open, and
/// walks every B-tree reachable from it — the free-page tree, the main database and every
/// named database — checking each page's header, each node's bounds, key order within and
/// across pages, depths, the counts the trees record, overflow pages, and that no page is
/// reached twice or is both in use and free. A file that passes can be opened and read by
/// LMDB without following a bad pointer.
///
/// ```swift
/// try PageCheck.check(dataFile: "/srv/book/data.mdb")  // throws FileDamage
/// ```
public enum PageCheck {
  // LMDB 0.9's on-disk constants (lmdb.h and mdb.c, 64-bit builds).
  static let headerSize = 16
  static let nodeSize = 8
  static let magic: UInt32 = 0xBEEF_C0DE
  static let dataVersion: UInt32 = 1
  static let branch: UInt16 = 0x01
  static let leaf: UInt16 = 0x02
  static let overflow: UInt16 = 0x04
  static let meta: UInt16 = 0x08
  static let bigData: UInt16 = 0x01
  static let subData: UInt16 = 0x02
  static let dupData: UInt16 = 0x04
  static let integerKey: UInt16 = 0x08

  /// Reads both meta pages; a damaged one is returned as the damage.
  public static func metaPages(dataFile: String) throws -> [Result<MetaPage, FileDamage>] {
    let file = try PageFile(path: dataFile)
    return file.metas()
  }

  /// Checks the file at `dataFile` as LMDB would open it (the valid meta page with the
  /// higher transaction).
  ///
  /// - Parameter dataFile: the path of the environment's data file (`data.mdb`).
  /// - Parameter full: walk every tree; otherwise only the meta pages and the file's length.
  /// - Returns: the meta page the file opens at.
  /// - Throws: ``FileDamage`` naming the page and database at fault.
  /// - Parameter checksummed: the named databases whose values carry a checksum
  ///   (``DatabaseFlags/checksummed``): each of their entries is checked against it too,
  ///   which also finds a changed key that kept its place in the key order.
  /// - Parameter snapshot: the transaction whose trees to walk, one a read transaction of
  ///   this process holds open (so that no writer reuses their pages meanwhile); its meta
  ///   page gone from the file (two commits since) throws `SnapshotOverwritten`.
  @discardableResult
  public static func check(
    dataFile: String, full: Bool = true, checksummed: (String) -> Bool = { _ in false }, snapshot: UInt64? = nil
  ) throws -> MetaPage {
    if let snapshot {
      let file = try PageFile(path: dataFile)
      guard let meta = file.metas().compactMap({ try? $0.get() }).first(where: { $0.transaction == snapshot })
      else { throw SnapshotOverwritten() }
      try file.checkLength(meta)
      if full {
        var walk = Walk(file: file, meta: meta)
        try walk.run(checksummed: checksummed)
      }
      return meta
    }
    // A writer in another process may commit meanwhile and reuse pages the walk is reading:
    // damage found under a meta page that is no longer the newest is looked at again.
    var attempts = 0
    while true {
      let file = try PageFile(path: dataFile)
      let meta: MetaPage
      do {
        meta = try file.openingMeta()
      } catch let damage as FileDamage {
        // A meta page read while another process writes it may be half old, half new:
        // read again after a moment before calling it damaged.
        attempts += 1
        guard attempts < 3 else { throw damage }
        usleep(10_000)
        continue
      }
      do {
        try file.checkLength(meta)
        if full {
          var walk = Walk(file: file, meta: meta)
          try walk.run(checksummed: checksummed)
        }
        return meta
      } catch let damage as FileDamage {
        attempts += 1
        let now = try? PageFile(path: dataFile).openingMeta()
        guard attempts < 3, let now, now.transaction != meta.transaction else { throw damage }
      }
    }
  }
}
