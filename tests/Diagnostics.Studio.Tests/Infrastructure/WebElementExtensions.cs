using OpenQA.Selenium;

namespace Diagnostics.Server.Tests.Infrastructure;

public static class WebElementExtensions
{
    /// <summary>A whole-number attribute the page wrote (data-points, data-last-time...); a missing or malformed one fails the test.</summary>
    public static long NumberAttribute(this IWebElement element, string name)
    {
        string? value = element.GetDomAttribute(name);
        Assert.True(long.TryParse(value, out long number), $"{element.TagName}#{element.GetDomAttribute("id")} has {name}='{value}', not a number");
        return number;
    }
}
