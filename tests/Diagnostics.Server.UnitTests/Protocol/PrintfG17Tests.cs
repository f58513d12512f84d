using System.Text;
using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.UnitTests.Protocol;

/// <summary>
/// The %.17g formatter against what glibc's printf("%.17g") printed for the same doubles (gcc,
/// Debian): fixed and exponent forms at their boundaries (1e-4 / 1e-5, 1e16 / 1e17), exponents of
/// two and three digits, subnormals, signed zero, and exact ties, which glibc rounds to even.
/// </summary>
public sealed class PrintfG17Tests
{
    [Theory]
    [InlineData(0.0, "0")]
    [InlineData(-0.0, "-0")]
    [InlineData(1.0, "1")]
    [InlineData(-1.0, "-1")]
    [InlineData(1.5, "1.5")]
    [InlineData(0.1, "0.10000000000000001")]
    [InlineData(-0.1, "-0.10000000000000001")]
    [InlineData(0.3, "0.29999999999999999")]
    [InlineData(2.0 / 3, "0.66666666666666663")]
    [InlineData(100.0, "100")]
    [InlineData(1234.5, "1234.5")]
    [InlineData(123.456, "123.456")]
    [InlineData(3.14159265358979, "3.14159265358979")]
    [InlineData(4294967296.0, "4294967296")]
    [InlineData(1e15, "1000000000000000")]
    [InlineData(1e16, "10000000000000000")]
    [InlineData(12345678901234567.0, "12345678901234568")]
    [InlineData(1e17, "1e+17")]
    [InlineData(123456789012345678.0, "1.2345678901234568e+17")]
    [InlineData(9223372036854775807.0, "9.2233720368547758e+18")]
    [InlineData(1e20, "1e+20")]
    [InlineData(-1e20, "-1e+20")]
    [InlineData(1e21, "1e+21")]
    [InlineData(1e100, "1e+100")]
    [InlineData(1e300, "1.0000000000000001e+300")]
    [InlineData(1.7976931348623157e308, "1.7976931348623157e+308")]
    [InlineData(-1.7976931348623157e308, "-1.7976931348623157e+308")]
    [InlineData(1e-4, "0.0001")]
    [InlineData(0.00012345, "0.00012344999999999999")]
    [InlineData(0.000244140625, "0.000244140625")]
    [InlineData(1e-5, "1.0000000000000001e-05")]
    [InlineData(1.2345e-5, "1.2345e-05")]
    [InlineData(2.5e-5, "2.5000000000000001e-05")]
    [InlineData(3.0517578125e-05, "3.0517578125e-05")]
    [InlineData(1e-300, "1e-300")]
    [InlineData(2.2250738585072014e-308, "2.2250738585072014e-308")]
    [InlineData(5e-324, "4.9406564584124654e-324")]
    [InlineData(double.PositiveInfinity, "inf")]
    [InlineData(double.NegativeInfinity, "-inf")]
    // Exact ties at the 18th digit (the literals are the doubles' exact values): to even.
    [InlineData(1234567890123456.25, "1234567890123456.2")]
    [InlineData(1417266604561749.75, "1417266604561749.8")]
    [InlineData(-1417266604561749.75, "-1417266604561749.8")]
    [InlineData(4000000000000.03125, "4000000000000.0312")]
    [InlineData(40000000.0029296875, "40000000.002929688")]
    [InlineData(4.00000762939453125, "4.0000076293945312")]
    [InlineData(8.94069671630859375e-08, "8.9406967163085938e-08")]
    public void FormatsAsGlibcPrintf(double value, string expected)
    {
        Span<byte> buffer = stackalloc byte[PrintfG17.MaxLength];
        int length = PrintfG17.Format(value, buffer);
        Assert.Equal(expected, Encoding.ASCII.GetString(buffer[..length]));
    }

    /// <summary>glibc writes the NaN's sign bit (.NET's double.NaN has it set).</summary>
    [Fact]
    public void NanKeepsItsSign()
    {
        Span<byte> buffer = stackalloc byte[PrintfG17.MaxLength];
        int length = PrintfG17.Format(BitConverter.Int64BitsToDouble(0x7FF8000000000000), buffer);
        Assert.Equal("nan", Encoding.ASCII.GetString(buffer[..length]));
        length = PrintfG17.Format(BitConverter.Int64BitsToDouble(unchecked((long)0xFFF8000000000000)), buffer);
        Assert.Equal("-nan", Encoding.ASCII.GetString(buffer[..length]));
    }
}
