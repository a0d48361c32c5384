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

  // MARK: - One tree

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

  // MARK: - Pages

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

// MARK: - Problems

/// A problem found inside one tree, reported with the tree's name and the page.
private struct Problem: Error {
  let detail: String
  init(_ detail: String) { self.detail = detail }
}
