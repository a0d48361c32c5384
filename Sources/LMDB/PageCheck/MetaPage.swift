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

// MARK: - A tree's root

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
