import Foundation

/// The binary form of attribute values: a tag byte, then the payload.
enum ValueTag: UInt8 {
  case none = 0, string, int16, int32, int64, double, float, decimal, falseValue, trueValue, date, binary, uuid, uri
  /// A personal value: its type, subject, blind hash and sealed bytes (``SealedValue``).
  case sealed
}

extension AttributeType {
  /// The type's number in a sealed value's encoding: its place in ``allCases``.
  var code: UInt8 { UInt8(Self.allCases.firstIndex(of: self) ?? 0) }

  init?(code: UInt8) {
    guard Int(code) < Self.allCases.count else { return nil }
    self = Self.allCases[Int(code)]
  }
}

extension BinaryWriter {
  /// About the number of bytes ``value(_:)`` writes for `v` (exact but for decimals), to
  /// size a buffer before encoding.
  static func estimatedSize(of v: Value?) -> Int {
    switch v {
    case .none, .boolean: 1
    case .string(let s), .uri(let s): 1 + varintSize(UInt64(s.utf8.count)) + s.utf8.count
    case .int16, .int32, .int64, .double, .date: 11
    case .float: 5
    case .decimal: 48
    case .binary(let b): 1 + varintSize(UInt64(b.count)) + b.count
    case .uuid: 17
    case .sealed(let s): 14 + s.blindHash.count + s.ciphertext.count
    }
  }

  mutating func value(_ v: Value?) {
    // A switch over the optional itself: binding `v` first copied it (a retain and a
    // release of its payload per value written).
    switch v {
    case nil: byte(ValueTag.none.rawValue)
    case .string(let s)?:
      byte(ValueTag.string.rawValue)
      string(s)
    case .int16(let n)?:
      byte(ValueTag.int16.rawValue)
      zigzag(Int64(n))
    case .int32(let n)?:
      byte(ValueTag.int32.rawValue)
      zigzag(Int64(n))
    case .int64(let n)?:
      byte(ValueTag.int64.rawValue)
      zigzag(n)
    case .double(let d)?:
      byte(ValueTag.double.rawValue)
      fixed64(d.bitPattern)
    case .float(let f)?:
      byte(ValueTag.float.rawValue)
      fixed32(f.bitPattern)
    case .decimal(let d)?:
      byte(ValueTag.decimal.rawValue)
      string(d.description)
    case .boolean(let b)?:
      byte(b ? ValueTag.trueValue.rawValue : ValueTag.falseValue.rawValue)
    case .date(let d)?:
      byte(ValueTag.date.rawValue)
      fixed64(d.timeIntervalSince1970.bitPattern)
    case .binary(let b)?:
      byte(ValueTag.binary.rawValue)
      lengthPrefixed(b)
    case .uuid(let u)?:
      byte(ValueTag.uuid.rawValue)
      // SAFETY: the 16 bytes of a local tuple, copied during the call.
      withUnsafeBytes(of: u.uuid) { bytes.append(contentsOf: $0) }
    case .uri(let s)?:
      byte(ValueTag.uri.rawValue)
      string(s)
    case .sealed(let s)?:
      byte(ValueTag.sealed.rawValue)
      byte(s.type.code)
      varint(s.subject.rawValue)
      lengthPrefixed(s.blindHash)
      lengthPrefixed(s.ciphertext)
    }
  }
}

extension BinaryReader {
  mutating func value() throws(CorruptionError) -> Value? {
    let tagByte = try byte()
    guard let tag = ValueTag(rawValue: tagByte) else { throw failure("unknown value tag \(tagByte)") }
    switch tag {
    case .none: return nil
    case .string: return .string(try string())
    case .int16:
      guard let n = Int16(exactly: try zigzag()) else { throw failure("int16 out of range") }
      return .int16(n)
    case .int32:
      guard let n = Int32(exactly: try zigzag()) else { throw failure("int32 out of range") }
      return .int32(n)
    case .int64: return .int64(try zigzag())
    case .double: return .double(Double(bitPattern: try fixed64()))
    case .float: return .float(Float(bitPattern: try fixed32()))
    case .decimal:
      let s = try string()
      guard let d = Decimal(string: s, locale: Locale(identifier: "en_US_POSIX")) else {
        throw failure("invalid decimal '\(s)'")
      }
      return .decimal(d)
    case .falseValue: return .boolean(false)
    case .trueValue: return .boolean(true)
    case .date: return .date(Date(timeIntervalSince1970: Double(bitPattern: try fixed64())))
    case .binary: return .binary([UInt8](try slice()))
    case .uuid:
      guard remaining >= 16 else { throw failure("unexpected end in a uuid") }
      // SAFETY: 16 bytes are available from `offset`, checked above; a tuple of bytes has
      // no alignment to keep.
      let t = bytes.loadUnaligned(fromByteOffset: offset, as: uuid_t.self)
      offset += 16
      return .uuid(UUID(uuid: t))
    case .uri: return .uri(try string())
    case .sealed:
      let code = try byte()
      guard let type = AttributeType(code: code) else { throw failure("unknown type \(code) in a sealed value") }
      let subject = ObjectID(try varint())
      let hash = [UInt8](try slice())
      let ciphertext = [UInt8](try slice())
      return .sealed(SealedValue(type: type, subject: subject, blindHash: hash, ciphertext: ciphertext))
    }
  }

  /// Checks a value as ``value()`` reads it, making no string or byte array (a decimal is
  /// parsed: its check is its parse).
  mutating func checkValue() throws(CorruptionError) {
    switch offset < bytes.count ? ValueTag(rawValue: bytes[offset]) : nil {
    case .string?, .uri?:
      offset += 1
      try checkString()
    case .binary?:
      offset += 1
      _ = try slice()
    default:
      _ = try value()
    }
  }

  /// Moves past a value that was checked before (``checkValue()``), decoding nothing.
  mutating func skipValue() throws(CorruptionError) {
    let tagByte = try byte()
    switch ValueTag(rawValue: tagByte) {
    case .string?, .decimal?, .binary?, .uri?: _ = try slice()
    case .sealed?:
      try skip(1)
      _ = try varint()
      _ = try slice()
      _ = try slice()
    case .int16?, .int32?, .int64?: _ = try varint()
    case .double?, .date?: try skip(8)
    case .float?: try skip(4)
    case .uuid?: try skip(16)
    case .none?, .falseValue?, .trueValue?: break
    case nil: throw failure("unknown value tag \(tagByte)")
    }
  }
}
