/// Every leaf entry the data file's pages still hold, whether or not a tree reaches them.
///
/// LMDB copies a page before it changes it, so the file keeps older versions of a tree's
/// leaves on pages it has freed, and a transaction whose meta page was lost leaves its new
/// pages behind with nothing pointing at them. A salvage reads those here: each page whose
/// header names its own number and marks it a leaf, each entry bounds-checked as
/// ``PageCheck`` checks it, a value on overflow pages followed when the overflow page's
/// header agrees. Nothing found here is vouched for by a tree: the caller checks each entry
/// (a checksum, a place in a sequence) before it trusts it.
public struct LeafScan {
  let file: PageFile
  let pageSize: Int

  /// A scan of `dataFile`, read in pages of `pageSize` bytes (a meta page's).
  public init(dataFile: String, pageSize: Int) throws {
    self.file = try PageFile(path: dataFile)
    self.pageSize = pageSize
  }

  /// The pages the file holds, meta pages included.
  public var pageCount: Int { file.size / pageSize }

  /// Hands `visit` the key and value of every entry on every leaf page, page by page, in
  /// the order of the file; entries that are damaged or lie outside their page are passed
  /// over, as are a named database's records.
  public func entries(_ visit: (_ key: [UInt8], _ value: [UInt8]) throws -> Void) rethrows {
    guard pageCount > 2 else { return }
    for number in 2..<pageCount {
      let r = file.read(number * pageSize, pageSize)
      guard r.bytes.count == pageSize, r.u64(0) == UInt64(number), let flags = r.u16(10),
        flags & (PageCheck.branch | PageCheck.leaf | PageCheck.overflow | PageCheck.meta) == PageCheck.leaf,
        let lower = r.u16(12).map(Int.init), let upper = r.u16(14).map(Int.init),
        lower >= PageCheck.headerSize, lower <= upper, upper <= pageSize
      else { continue }
      for i in 0..<((lower - PageCheck.headerSize) / 2) {
        guard let (key, value) = entry(i, of: r, upper: upper) else { continue }
        try visit(key, value)
      }
    }
  }

  /// Entry `i` of leaf page `r`, or `nil` when any of its bounds fails.
  private func entry(_ i: Int, of r: PageBytes, upper: Int) -> ([UInt8], [UInt8])? {
    guard let offset = r.u16(PageCheck.headerSize + 2 * i).map(Int.init), offset >= upper,
      offset + PageCheck.nodeSize <= pageSize, let lo = r.u16(offset), let hi = r.u16(offset + 2),
      let nodeFlags = r.u16(offset + 4), let keySize = r.u16(offset + 6).map(Int.init),
      let key = r.slice(offset + PageCheck.nodeSize, keySize),
      nodeFlags & ~PageCheck.bigData == 0
    else { return nil }
    let size = Int(lo) | Int(hi) << 16
    let dataOffset = offset + PageCheck.nodeSize + keySize
    guard nodeFlags & PageCheck.bigData != 0 else {
      return r.slice(dataOffset, size).map { (Array(key), Array($0)) }
    }
    guard let first = r.u64(dataOffset), first >= 2, first < UInt64(pageCount) else { return nil }
    let header = file.read(Int(first) * pageSize, PageCheck.headerSize)
    guard header.u64(0) == first, let flags = header.u16(10), flags & PageCheck.overflow != 0,
      let pages = header.u32(12).map(Int.init), pages >= 1, Int(first) + pages <= pageCount,
      size <= pages * pageSize - PageCheck.headerSize
    else { return nil }
    let value = file.read(Int(first) * pageSize + PageCheck.headerSize, size).bytes
    return value.count == size ? (Array(key), value) : nil
  }
}
