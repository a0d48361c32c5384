import Foundation

/// Damage found in an LMDB data file: what is wrong and where.
public struct FileDamage: Error, Sendable, Hashable, CustomStringConvertible {
  /// The data file.
  public var file: String
  /// The page at fault, when one is.
  public var page: Int?
  /// The database whose tree holds the page (`"(main)"`, `"(free pages)"`, or a name).
  public var database: String?
  /// What is wrong.
  public var detail: String

  public var description: String {
    var at: [String] = []
    if let database { at.append("database \(database)") }
    if let page { at.append("page \(page)") }
    return "\(file) is damaged" + (at.isEmpty ? "" : " (\(at.joined(separator: ", ")))") + ": \(detail)"
  }
}

/// One of the two meta pages of an LMDB data file, as read from the file.
public struct MetaPage: Sendable, Hashable {
  /// 0 or 1.
  public let index: Int
  public let pageSize: Int
  /// The last page in use: the file must hold at least `(lastPage + 1) * pageSize` bytes.
  public let lastPage: Int
  /// The transaction that wrote it; LMDB opens the meta page with the higher one.
  public let transaction: UInt64
  let free: TreeRoot
  let main: TreeRoot
}

/// A B-tree's root as a meta page or the main database records it.
struct TreeRoot: Sendable, Hashable {
  let flags: UInt16
  let depth: Int
  let branchPages: UInt64
  let leafPages: UInt64
  let overflowPages: UInt64
  let entries: UInt64
  /// `nil` for an empty tree.
  let root: Int?

  /// Reads the 48-byte `MDB_db` at `offset`.
  init?(_ r: PageBytes, at offset: Int) {
    guard let flags = r.u16(offset + 4), let depth = r.u16(offset + 6), let branch = r.u64(offset + 8),
      let leaf = r.u64(offset + 16), let overflow = r.u64(offset + 24), let entries = r.u64(offset + 32),
      let root = r.u64(offset + 40)
    else { return nil }
    self.flags = flags
    self.depth = Int(depth)
    self.branchPages = branch
    self.leafPages = leaf
    self.overflowPages = overflow
    self.entries = entries
    self.root = root == UInt64.max ? nil : (root > UInt64(Int.max) ? Int.max : Int(root))
  }
}

/// Bytes read from the file, with every read bounds-checked: damage gives `nil`, never a trap.
struct PageBytes {
  let bytes: [UInt8]

  func u16(_ at: Int) -> UInt16? {
    guard at >= 0, at + 2 <= bytes.count else { return nil }
    return UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8
  }

  func u32(_ at: Int) -> UInt32? {
    guard let lo = u16(at), let hi = u16(at + 2) else { return nil }
    return UInt32(lo) | UInt32(hi) << 16
  }

  func u64(_ at: Int) -> UInt64? {
    guard let lo = u32(at), let hi = u32(at + 4) else { return nil }
    return UInt64(lo) | UInt64(hi) << 32
  }

  func slice(_ at: Int, _ count: Int) -> ArraySlice<UInt8>? {
    guard at >= 0, count >= 0, at + count <= bytes.count else { return nil }
    return bytes[at..<(at + count)]
  }
}

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
  /// - Parameter full: walk every tree; otherwise only the meta pages and the file's length.
  /// - Returns: the meta page the file opens at.
  /// - Throws: ``FileDamage`` naming the page and database at fault.
  /// - Parameter checksummed: the named databases whose values carry a checksum
  ///   (``DatabaseFlags/checksummed``): each of their entries is checked against it too,
  ///   which also finds a changed key that kept its place in the key order.
  /// - Parameter snapshot: the transaction whose trees to walk, one a read transaction of
  ///   this process holds open (so that no writer reuses their pages meanwhile); its meta
  ///   page gone from the file (two commits since) throws ``SnapshotOverwritten``.
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

/// The data file, read in blocks of 1 MiB (a few kept), a page at a time.
final class PageFile {
  let path: String
  let handle: FileHandle
  let size: Int
  private static let blockSize = 1 << 20
  private static let blocksKept = 32
  private var blocks: [Int: [UInt8]] = [:]

  init(path: String) throws {
    guard let handle = FileHandle(forReadingAtPath: path) else {
      throw FileDamage(file: path, detail: "cannot be opened for reading")
    }
    self.path = path
    self.handle = handle
    self.size = Int((try? handle.seekToEnd()) ?? 0)
  }

  deinit { try? handle.close() }

  /// `count` bytes from `offset`, or fewer at the end of the file.
  func read(_ offset: Int, _ count: Int) -> PageBytes {
    guard offset >= 0, count >= 0, offset < size else { return PageBytes(bytes: []) }
    let end = min(offset + count, size)
    var out: [UInt8] = []
    out.reserveCapacity(end - offset)
    var at = offset
    while at < end {
      let index = at / Self.blockSize
      let block = self.block(index)
      let start = at - index * Self.blockSize
      let stop = min(block.count, end - index * Self.blockSize)
      guard start < stop else { break }
      out.append(contentsOf: block[start..<stop])
      at = index * Self.blockSize + stop
    }
    return PageBytes(bytes: out)
  }

  private func block(_ index: Int) -> [UInt8] {
    if let b = blocks[index] { return b }
    if blocks.count >= Self.blocksKept { blocks.removeAll(keepingCapacity: true) }
    let offset = index * Self.blockSize
    guard (try? handle.seek(toOffset: UInt64(offset))) != nil,
      let data = try? handle.read(upToCount: min(Self.blockSize, size - offset))
    else { return [] }
    let b = [UInt8](data)
    blocks[index] = b
    return b
  }

  /// Both meta pages, each parsed or its damage.
  func metas() -> [Result<MetaPage, FileDamage>] {
    // The first meta page gives the page size; the second is read at that offset, or at
    // the usual 4 KiB when the first is unreadable.
    let first = meta(0, offset: 0)
    let pageSize = (try? first.get().pageSize) ?? 4096
    return [first, meta(1, offset: pageSize)]
  }

  private func meta(_ index: Int, offset: Int) -> Result<MetaPage, FileDamage> {
    let r = read(offset, PageCheck.headerSize + 136)
    func damage(_ detail: String) -> Result<MetaPage, FileDamage> {
      .failure(FileDamage(file: path, page: index, database: nil, detail: "meta page \(index): \(detail)"))
    }
    guard r.bytes.count == PageCheck.headerSize + 136 else { return damage("the file ends inside it") }
    guard let flags = r.u16(10), flags & PageCheck.meta != 0 else { return damage("not marked as a meta page") }
    let m = PageCheck.headerSize
    guard r.u32(m) == PageCheck.magic else { return damage("no LMDB magic number") }
    guard r.u32(m + 4) == PageCheck.dataVersion else { return damage("an unknown LMDB data version") }
    guard let free = TreeRoot(r, at: m + 24), let main = TreeRoot(r, at: m + 72),
      let lastPage = r.u64(m + 120), let txn = r.u64(m + 128)
    else { return damage("cut short") }
    let pageSize = Int(r.u32(m + 24) ?? 0)
    guard pageSize >= 512, pageSize <= 65536, pageSize & (pageSize - 1) == 0 else {
      return damage("page size \(pageSize) is not a power of two from 512 to 65536")
    }
    guard lastPage >= 1, lastPage < UInt64(Int.max / pageSize) else { return damage("last page \(lastPage)") }
    return .success(
      MetaPage(
        index: index, pageSize: pageSize, lastPage: Int(lastPage), transaction: txn, free: free, main: main))
  }

  /// The meta page LMDB opens: the valid one with the higher transaction.
  ///
  /// LMDB refuses a file with a damaged meta page, so either damage is reported, naming
  /// the other.
  func openingMeta() throws -> MetaPage {
    let both = metas()
    // Neither page has LMDB's magic: not damage, another kind of file.
    if both.allSatisfy({ (try? $0.get()) == nil }), read(PageCheck.headerSize, 4).u32(0) != PageCheck.magic {
      throw NotAnLMDBFile()
    }
    var valid: [MetaPage] = []
    for m in both {
      switch m {
      case .success(let page): valid.append(page)
      case .failure(let damage):
        let other = both.compactMap { try? $0.get() }.first
        var d = damage
        d.detail +=
          other.map {
            "; meta page \($0.index) is intact (transaction \($0.transaction)): `eventtool salvage` recovers from it"
          }
          ?? ""
        throw d
      }
    }
    guard let newest = valid.max(by: { $0.transaction < $1.transaction }) else {
      throw FileDamage(file: path, detail: "no meta page")
    }
    return newest
  }

  /// A file shorter than the pages its meta page says are in use faults every read of
  /// the missing pages.
  func checkLength(_ meta: MetaPage) throws {
    let needed = (meta.lastPage + 1) * meta.pageSize
    guard size >= needed else {
      throw FileDamage(
        file: path, page: meta.lastPage, database: nil,
        detail:
          "truncated: \(size) bytes, but transaction \(meta.transaction) uses \(meta.lastPage + 1) pages of \(meta.pageSize) bytes (\(needed) bytes, \(needed - size) missing)"
      )
    }
  }
}

/// The file is not an LMDB data file at all (neither meta page has LMDB's magic number).
struct NotAnLMDBFile: Error {}

/// The meta page of the transaction a check was to walk was overwritten before it was read.
struct SnapshotOverwritten: Error {}

/// A walk of every tree reachable from one meta page.
struct Walk {
  let file: PageFile
  let meta: MetaPage
  var pageSize: Int { meta.pageSize }
  /// Pages reached so far (a page reached twice is damage).
  private var seen: Set<Int> = []

  init(file: PageFile, meta: MetaPage) {
    self.file = file
    self.meta = meta
  }

  /// What one tree's walk counted, to compare with what its root records.
  struct Counts {
    var branch: UInt64 = 0
    var leaf: UInt64 = 0
    var overflow: UInt64 = 0
    var entries: UInt64 = 0
  }

  mutating func run(checksummed: (String) -> Bool) throws {
    var named: [(String, TreeRoot)] = []
    try walk(meta.main, name: "(main)") { key, value, flags in
      guard flags & PageCheck.subData != 0 else { return }
      guard value.count == 48, let root = TreeRoot(PageBytes(bytes: Array(value)), at: 0) else {
        throw Problem("a named database's record is \(value.count) bytes, not 48")
      }
      named.append((String(decoding: key, as: UTF8.self), root))
    }
    for (name, root) in named {
      let verify = checksummed(name)
      var index = 0
      try walk(root, name: name) { key, value, _ in
        defer { index += 1 }
        guard verify else { return }
        let ok = Array(key).withUnsafeBytes { k in
          Array(value).withUnsafeBytes { v in EntryChecksum.verified(k, v) != nil }
        }
        if !ok { throw Problem("entry \(index) (key \(EntryChecksum.hex(key))) does not match its checksum") }
      }
    }
    var free: [Int] = []
    try walk(meta.free, name: "(free pages)") { _, value, _ in
      // A list of page numbers: its count, then the numbers.
      let r = PageBytes(bytes: Array(value))
      guard let count = r.u64(0), count <= UInt64(value.count / 8), value.count == (Int(count) + 1) * 8 else {
        throw Problem("a free-page list of \(value.count) bytes does not hold the count it starts with")
      }
      for i in 0..<Int(count) { free.append(Int(truncatingIfNeeded: r.u64(8 + i * 8) ?? 0)) }
    }
    for p in free {
      guard p >= 2, p <= meta.lastPage else {
        throw FileDamage(
          file: file.path, page: p, database: "(free pages)", detail: "a free page outside the file's pages")
      }
      guard !seen.contains(p) else {
        throw FileDamage(file: file.path, page: p, database: "(free pages)", detail: "a page in use is listed as free")
      }
    }
  }

  /// Walks one tree, handing each leaf entry (key, value, node flags) to `visit`.
  mutating func walk(
    _ root: TreeRoot, name: String, _ visit: (ArraySlice<UInt8>, ArraySlice<UInt8>, UInt16) throws -> Void
  ) throws {
    guard root.flags & ~PageCheck.integerKey == 0 else {
      throw FileDamage(
        file: file.path, page: nil, database: name, detail: "database flags \(root.flags) are not ones this store uses")
    }
    guard let top = root.root else {
      guard root.depth == 0, root.entries == 0 else {
        throw FileDamage(file: file.path, page: nil, database: name, detail: "an empty tree that records entries")
      }
      return
    }
    guard root.depth >= 1, root.depth <= 64 else {
      throw FileDamage(file: file.path, page: top, database: name, detail: "a tree depth of \(root.depth)")
    }
    var counts = Counts()
    do {
      try page(
        top, level: root.depth, integerKeys: root.flags & PageCheck.integerKey != 0, lower: nil, upper: nil,
        counts: &counts, visit)
    } catch let problem as Problem {
      throw FileDamage(file: file.path, page: currentPage, database: name, detail: problem.detail)
    }
    let recorded = (root.branchPages, root.leafPages, root.overflowPages, root.entries)
    guard recorded == (counts.branch, counts.leaf, counts.overflow, counts.entries) else {
      throw FileDamage(
        file: file.path, page: top, database: name,
        detail:
          "the tree records \(root.entries) entries in \(root.branchPages) branch, \(root.leafPages) leaf and \(root.overflowPages) overflow pages, but holds \(counts.entries) in \(counts.branch), \(counts.leaf) and \(counts.overflow)"
      )
    }
  }

  /// The page being checked, for the damage report.
  private var currentPage: Int?

  /// Checks page `number`, `level` levels above the leaves (1 for a leaf), whose keys must
  /// lie in `lower..<upper`, and the pages below it.
  private mutating func page(
    _ number: Int, level: Int, integerKeys: Bool, lower: [UInt8]?, upper: [UInt8]?, counts: inout Counts,
    _ visit: (ArraySlice<UInt8>, ArraySlice<UInt8>, UInt16) throws -> Void
  ) throws {
    currentPage = number
    guard number >= 2, number <= meta.lastPage else {
      throw Problem("a page number outside the file's \(meta.lastPage + 1) pages")
    }
    guard seen.insert(number).inserted else { throw Problem("a page reached twice") }
    let r = file.read(number * pageSize, pageSize)
    guard r.bytes.count == pageSize else { throw Problem("the file ends inside the page") }
    guard r.u64(0) == UInt64(number) else { throw Problem("the page's header names page \(r.u64(0) ?? 0)") }
    guard let flags = r.u16(10), let lowerBound = r.u16(12).map(Int.init), let upperBound = r.u16(14).map(Int.init)
    else { throw Problem("a header cut short") }
    let isLeaf = level == 1
    let kind = flags & (PageCheck.branch | PageCheck.leaf | PageCheck.overflow | PageCheck.meta | 0x20 | 0x40)
    guard kind == (isLeaf ? PageCheck.leaf : PageCheck.branch) else {
      throw Problem("a \(isLeaf ? "leaf" : "branch") page was expected, the header's flags are \(flags)")
    }
    guard lowerBound >= PageCheck.headerSize, lowerBound % 2 == 0, lowerBound <= upperBound, upperBound <= pageSize
    else { throw Problem("free-space bounds \(lowerBound)...\(upperBound) outside the page") }
    let keys = (lowerBound - PageCheck.headerSize) / 2
    guard keys >= 1 else { throw Problem("a page with no entries") }
    if isLeaf { counts.leaf += 1 } else { counts.branch += 1 }
    var previous: ArraySlice<UInt8>?
    for i in 0..<keys {
      currentPage = number
      guard let offset = r.u16(PageCheck.headerSize + 2 * i).map(Int.init), offset >= upperBound,
        offset + PageCheck.nodeSize <= pageSize, let lo = r.u16(offset), let hi = r.u16(offset + 2),
        let nodeFlags = r.u16(offset + 4), let keySize = r.u16(offset + 6).map(Int.init),
        let key = r.slice(offset + PageCheck.nodeSize, keySize)
      else { throw Problem("entry \(i) lies outside the page") }
      // A branch's first key is empty: it stands for everything below the second.
      if !(i == 0 && !isLeaf) {
        if let previous, !Self.precedes(previous, key, integerKeys: integerKeys) {
          throw Problem("entry \(i) is out of key order")
        }
        if let lower, Self.precedes(key, lower[...], integerKeys: integerKeys) {
          throw Problem("entry \(i) sorts before its parent's key")
        }
        if let upper, !Self.precedes(key, upper[...], integerKeys: integerKeys) {
          throw Problem("entry \(i) sorts after its parent's next key")
        }
        previous = key
      }
      let dataOffset = offset + PageCheck.nodeSize + keySize
      if isLeaf {
        counts.entries += 1
        guard nodeFlags & ~(PageCheck.bigData | PageCheck.subData) == 0 else {
          throw Problem("entry \(i) has flags \(nodeFlags) this store does not use")
        }
        let dataSize = Int(lo) | Int(hi) << 16
        if nodeFlags & PageCheck.bigData != 0 {
          guard let first = r.u64(dataOffset), first <= UInt64(meta.lastPage) else {
            throw Problem("entry \(i)'s overflow page is outside the file")
          }
          let value = try overflowValue(Int(first), size: dataSize, counts: &counts)
          currentPage = number
          try visit(key, value[...], nodeFlags)
        } else {
          guard let value = r.slice(dataOffset, dataSize) else {
            throw Problem("entry \(i)'s value of \(dataSize) bytes overruns the page")
          }
          try visit(key, value, nodeFlags)
        }
      } else {
        let child = Int(lo) | Int(hi) << 16 | Int(nodeFlags) << 32
        let next: [UInt8]? =
          i + 1 < keys
          ? (r.u16(PageCheck.headerSize + 2 * (i + 1)).flatMap { o -> [UInt8]? in
            guard let size = r.u16(Int(o) + 6), let k = r.slice(Int(o) + PageCheck.nodeSize, Int(size)) else {
              return nil
            }
            return Array(k)
          }) : upper
        if i + 1 < keys && next == nil { throw Problem("entry \(i + 1) lies outside the page") }
        let low = i == 0 ? lower : Array(key)
        try page(child, level: level - 1, integerKeys: integerKeys, lower: low, upper: next, counts: &counts, visit)
      }
    }
  }

  /// Reads a value stored on overflow pages.
  private mutating func overflowValue(_ first: Int, size: Int, counts: inout Counts) throws -> [UInt8] {
    currentPage = first
    guard first >= 2 else { throw Problem("an overflow page number \(first)") }
    let header = file.read(first * pageSize, PageCheck.headerSize)
    guard header.u64(0) == UInt64(first), let flags = header.u16(10), flags & PageCheck.overflow != 0,
      let pages = header.u32(12).map(Int.init), pages >= 1, first + pages - 1 <= meta.lastPage
    else { throw Problem("not a valid overflow page") }
    guard size <= pages * pageSize - PageCheck.headerSize else {
      throw Problem("a value of \(size) bytes on \(pages) overflow pages")
    }
    for p in first..<(first + pages) {
      guard seen.insert(p).inserted else { throw Problem("overflow page \(p) reached twice") }
    }
    counts.overflow += UInt64(pages)
    let value = file.read(first * pageSize + PageCheck.headerSize, size).bytes
    guard value.count == size else { throw Problem("the file ends inside an overflow value") }
    return value
  }

  /// Whether `a` sorts strictly before `b` in the tree's key order.
  private static func precedes(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>, integerKeys: Bool) -> Bool {
    if integerKeys, a.count == b.count {
      // Native (little-endian) unsigned integers: the last byte is the most significant.
      for (x, y) in zip(a.reversed(), b.reversed()) where x != y { return x < y }
      return false
    }
    return a.lexicographicallyPrecedes(b)
  }
}

/// A problem found inside one tree, reported with the tree's name and the page.
private struct Problem: Error {
  let detail: String
  init(_ detail: String) { self.detail = detail }
}

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
