using System.Buffers;
using Diagnostics.Doctor;

namespace Diagnostics.Studio.Sources;

/// <summary>
/// An uploaded package copied to a temporary file that deletes itself when closed: a zip is read
/// from its end, so it must be seekable, and on disk it costs the heap nothing. The bytes are
/// counted as they arrive, whatever the upload said its length was.
/// </summary>
internal static class PackageSpool
{
    private const int BufferBytes = 81920;

    public static async Task<FileStream> CopyAsync(Stream upload, string fileName, long? declaredLength, PackageLimits limits, CancellationToken cancellationToken)
    {
        if (declaredLength > limits.MaxPackageBytes)
            throw TooLarge(fileName, limits);
        string path = Path.Combine(Path.GetTempPath(), $"diagnostics-package-{Guid.NewGuid():N}.zip");
        var file = new FileStream(path, FileMode.CreateNew, FileAccess.ReadWrite, FileShare.None, BufferBytes, FileOptions.DeleteOnClose);
        byte[] buffer = ArrayPool<byte>.Shared.Rent(BufferBytes);
        try
        {
            long total = 0;
            int read;
            while ((read = await upload.ReadAsync(buffer, cancellationToken)) > 0)
            {
                total += read;
                if (total > limits.MaxPackageBytes)
                    throw TooLarge(fileName, limits);
                await file.WriteAsync(buffer.AsMemory(0, read), cancellationToken);
            }
            await file.FlushAsync(cancellationToken);
            file.Position = 0;
            return file;
        }
        catch
        {
            await file.DisposeAsync();
            throw;
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    private static InvalidPackageException TooLarge(string fileName, PackageLimits limits) => new(
        $"{fileName} is larger than {Human.Bytes(limits.MaxPackageBytes)}, the limit for a package ({PackageLimits.PackageSizeSetting})",
        PackageLimits.PackageSizeSetting);
}
