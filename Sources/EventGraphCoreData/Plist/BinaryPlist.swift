/// Apple's binary property list (`bplist00`), read from bytes with bounds checks and no
/// pointers: the header, the objects, the offset table and the 32-byte trailer.
///
/// Every object is decoded once into a flat table (containers hold object numbers), then
/// ``value(_:)`` builds a tree from an object with a depth limit, so a reference cycle or a
/// deep nesting is an error rather than a crash.
public struct BinaryPlist: Sendable {
  /// One object of the table; containers name other objects by number.
  enum Object: Sendable {
    case null, bool(Bool), int(Int64), real(Double), date(Double), data([UInt8]), string(String), uid(Int)
    case array([Int]), dictionary([(key: Int, value: Int)])
  }

  let objects: [Object]
  /// The number of the top object.
  public let top: Int

  /// The deepest nesting ``value(_:)`` follows.
  static let maxDepth = 200

  /// Whether `bytes` start as a binary plist.
  public static func isBinaryPlist(_ bytes: [UInt8]) -> Bool {
    bytes.count >= 8 && Array(bytes[0..<6]) == Array("bplist".utf8)
  }

  public init(_ bytes: [UInt8]) throws(PlistError) {
    guard bytes.count >= 40, Self.isBinaryPlist(bytes) else { throw PlistError("not a binary property list") }
    let t = bytes.count - 32
    let offsetSize = Int(bytes[t + 6])
    let refSize = Int(bytes[t + 7])
    let count = try Self.uint(bytes, t + 8, 8)
    let top = try Self.uint(bytes, t + 16, 8)
    let tableStart = try Self.uint(bytes, t + 24, 8)
    guard (1...8).contains(offsetSize), (1...8).contains(refSize), count >= 1, count <= UInt64(bytes.count),
      top < count, tableStart >= 8, tableStart + count * UInt64(offsetSize) <= UInt64(t)
    else { throw PlistError("the trailer of the binary property list is damaged") }
    let reader = Reader(bytes: bytes, refSize: refSize, count: Int(count), end: Int(tableStart))
    var objects: [Object] = []
    objects.reserveCapacity(Int(count))
    for i in 0..<Int(count) {
      let offset = try Self.uint(bytes, Int(tableStart) + i * offsetSize, offsetSize)
      guard offset >= 8, offset < tableStart else {
        throw PlistError("object \(i) of the binary property list lies outside its objects")
      }
      objects.append(try reader.object(at: Int(offset), number: i))
    }
    self.objects = objects
    self.top = Int(top)
  }

  /// The tree of the top object.
  public func topValue() throws(PlistError) -> PlistValue { try value(top) }

  /// The tree of object `n`, with its containers resolved.
  public func value(_ n: Int, depth: Int = 0) throws(PlistError) -> PlistValue {
    guard depth < Self.maxDepth else {
      throw PlistError("the binary property list nests deeper than \(Self.maxDepth) levels (a reference cycle?)")
    }
    guard n >= 0, n < objects.count else { throw PlistError("a reference to object \(n), which does not exist") }
    switch objects[n] {
    case .null: return .string("$null")
    case .bool(let b): return .bool(b)
    case .int(let i): return .int(i)
    case .real(let d): return .real(d)
    case .date(let d): return .date(d)
    case .data(let d): return .data(d)
    case .string(let s): return .string(s)
    case .uid(let u): return .uid(u)
    case .array(let refs):
      var a: [PlistValue] = []
      for r in refs { a.append(try value(r, depth: depth + 1)) }
      return .array(a)
    case .dictionary(let pairs):
      var d: [(key: String, value: PlistValue)] = []
      for p in pairs {
        guard case .string(let k) = try value(p.key, depth: depth + 1) else {
          throw PlistError("object \(n): a dictionary key that is not a string")
        }
        d.append((k, try value(p.value, depth: depth + 1)))
      }
      return .dictionary(d)
    }
  }

  /// A big-endian unsigned integer of `size` bytes at `at`.
  static func uint(_ b: [UInt8], _ at: Int, _ size: Int) throws(PlistError) -> UInt64 {
    guard at >= 0, size >= 1, size <= 8, at + size <= b.count else {
      throw PlistError("the binary property list ends inside a number")
    }
    var n: UInt64 = 0
    for i in at..<(at + size) { n = n << 8 | UInt64(b[i]) }
    return n
  }
}

/// Decodes the objects of a binary plist, one marker byte and its payload at a time.
private struct Reader {
  let bytes: [UInt8]
  let refSize: Int
  let count: Int
  /// Where the objects end (the offset table's start).
  let end: Int

  func object(at offset: Int, number: Int) throws(PlistError) -> BinaryPlist.Object {
    let marker = bytes[offset]
    let kind = marker >> 4
    let low = Int(marker & 0x0F)
    switch kind {
    case 0x0:
      switch marker {
      case 0x00, 0x0F: return .null
      case 0x08: return .bool(false)
      case 0x09: return .bool(true)
      default: throw bad(number, "unknown marker 0x\(String(marker, radix: 16))")
      }
    case 0x1:
      guard low <= 3 else { throw bad(number, "an integer wider than 8 bytes") }
      let size = 1 << low
      let raw = try BinaryPlist.uint(bytes, offset + 1, size)
      // 1, 2 and 4 byte integers are unsigned; 8 byte ones are signed.
      return .int(size == 8 ? Int64(bitPattern: raw) : Int64(raw))
    case 0x2:
      guard low == 2 || low == 3 else { throw bad(number, "a real of \(1 << low) bytes") }
      let raw = try BinaryPlist.uint(bytes, offset + 1, 1 << low)
      return .real(low == 2 ? Double(Float(bitPattern: UInt32(raw))) : Double(bitPattern: raw))
    case 0x3:
      guard marker == 0x33 else { throw bad(number, "unknown marker 0x\(String(marker, radix: 16))") }
      return .date(Double(bitPattern: try BinaryPlist.uint(bytes, offset + 1, 8)))
    case 0x4, 0x5, 0x6:
      let (length, start) = try lengthAndStart(offset, low, number)
      let width = kind == 0x6 ? 2 : 1
      guard length <= (end - start) / width else { throw bad(number, "its length runs past the objects") }
      let payload = Array(bytes[start..<(start + length * width)])
      if kind == 0x4 { return .data(payload) }
      if kind == 0x5 {
        guard payload.allSatisfy({ $0 < 0x80 }) else { throw bad(number, "an ASCII string with a byte over 127") }
        return .string(String(decoding: payload, as: UTF8.self))
      }
      var units: [UInt16] = []
      units.reserveCapacity(length)
      for i in 0..<length { units.append(UInt16(payload[2 * i]) << 8 | UInt16(payload[2 * i + 1])) }
      guard let s = String(validating: units, as: UTF16.self) else {
        throw bad(number, "a UTF-16 string that is not valid")
      }
      return .string(s)
    case 0x8:
      let raw = try BinaryPlist.uint(bytes, offset + 1, low + 1)
      guard let u = Int(exactly: raw) else { throw bad(number, "a reference \(raw) too large to name an object") }
      return .uid(u)
    case 0xA, 0xC:
      let (length, start) = try lengthAndStart(offset, low, number)
      return .array(try refs(start, length, number))
    case 0xD:
      let (length, start) = try lengthAndStart(offset, low, number)
      let all = try refs(start, length * 2, number)
      return .dictionary((0..<length).map { (all[$0], all[length + $0]) })
    default:
      throw bad(number, "unknown marker 0x\(String(marker, radix: 16))")
    }
  }

  /// The count of a data, string or container object (in its marker, or in an integer
  /// object after it when the marker says 15) and where its payload starts.
  private func lengthAndStart(_ offset: Int, _ low: Int, _ number: Int) throws(PlistError) -> (Int, Int) {
    guard low == 0x0F else { return (low, offset + 1) }
    guard offset + 1 < end, bytes[offset + 1] >> 4 == 0x1 else { throw bad(number, "a length that is not an integer") }
    let size = 1 << Int(bytes[offset + 1] & 0x0F)
    guard size <= 8 else { throw bad(number, "a length wider than 8 bytes") }
    let n = try BinaryPlist.uint(bytes, offset + 2, size)
    guard n <= UInt64(end) else { throw bad(number, "a length of \(n), past the end of the file") }
    return (Int(n), offset + 2 + size)
  }

  private func refs(_ start: Int, _ n: Int, _ number: Int) throws(PlistError) -> [Int] {
    guard n <= (end - start) / refSize else { throw bad(number, "its references run past the objects") }
    var result: [Int] = []
    result.reserveCapacity(n)
    for i in 0..<n {
      let r = try BinaryPlist.uint(bytes, start + i * refSize, refSize)
      guard r < UInt64(count) else { throw bad(number, "a reference to object \(r), which does not exist") }
      result.append(Int(r))
    }
    return result
  }

  private func bad(_ number: Int, _ what: String) -> PlistError {
    PlistError("object \(number) of the binary property list: \(what)")
  }
}
