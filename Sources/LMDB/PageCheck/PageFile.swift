import Foundation

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
            "; meta page \($0.index) is intact (transaction \($0.transaction)): a salvage recovers from it"
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
